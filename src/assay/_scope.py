"""A context variable set for a block: the per-trial scopes, without ``@contextmanager``.

Every trial enters about ten of these (recorder, epoch, budget, sandboxes, state...).
A generator-based context manager costs about 2.3 µs to enter and leave, this class
about 0.6 µs: together some 15 µs of a trial that costs under 200 µs in all.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class Scope(Generic[V]):
    """Set *var* to *value* on entering (which returns *value*), reset it on leaving."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[Any], value: V) -> None:
        self._var = var
        self._value = value

    def __enter__(self) -> V:
        self._token: Token[Any] = self._var.set(self._value)
        return self._value

    def __exit__(self, *exc: object) -> None:
        self._var.reset(self._token)
