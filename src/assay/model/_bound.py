"""What a running trial binds for the code it calls: its budget, epoch, state,
``generate`` and the task's scorers, held in one context variable.

Five context variables would cost a trial five sets and five resets around its solvers
(a lean trial's model call: about 17,000 instructions of some 656,000, the HAMT of the
context copied each time); one ``Bound`` holding the five costs one. Each scope that
binds one of them (``budget_scope``, ``epoch_scope``, ``state_scope``,
``task_scorers_scope``, a ``Chain``) binds a copy with that field replaced, and leaving
it puts the whole binding back: the same view, block for block, as five variables.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

if TYPE_CHECKING:
    from assay.model._budget import Budget

V = TypeVar("V")


class Bound(msgspec.Struct, frozen=True):
    """A trial's bindings (``None``, or no scorers, where nothing is bound)."""

    budget: Budget | None = None
    epoch: int | None = None
    state: Any = None  # a TaskState (assay.solver: a layer above)
    generate: Any = None  # the trial's ``generate`` (assay.solver.Generate)
    scorers: tuple[Any, ...] = ()


_NOTHING_BOUND = Bound()

_bound: ContextVar[Bound] = ContextVar("assay_trial_bound", default=_NOTHING_BOUND)

bound_now = _bound.get
"""The bindings in force (the variable's own ``get``: read on every model call)."""

bind_all = _bound.set
"""Bind a whole ``Bound`` (the lean trial's five at once); ``unbind`` with its token."""

unbind = _bound.reset
"""Put back the bindings a ``bind`` or ``bind_all`` replaced, given its token."""

_replace = msgspec.structs.replace


def bind(**fields: Any) -> Token[Bound]:
    """Bind *fields* over the bindings in force, the others kept as they are; ``unbind``
    with the token it returns."""
    return _bound.set(_replace(_bound.get(), **fields))


class BoundScope(Generic[V]):
    """Bind *value* as the binding's *field* for a block (entering returns *value*)."""

    __slots__ = ("_field", "_token", "_value")

    def __init__(self, field: str, value: V) -> None:
        self._field = field
        self._value = value

    def __enter__(self) -> V:
        self._token: Token[Bound] = bind(**{self._field: self._value})
        return self._value

    def __exit__(self, *exc: object) -> None:
        unbind(self._token)
