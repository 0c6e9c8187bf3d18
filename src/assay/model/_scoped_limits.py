"""Limits on part of a trial: ``with token_limit(1000):``, ``message_limit``,
``time_limit`` and ``working_limit``, as Inspect's ``inspect_ai.util`` has them.

A sample's own limits (``Task(token_limit=...)``) cover the whole trial; these cover a
block, nested as the blocks are. Passing one raises ``LimitExceededError`` where the
block is: code that catches it goes on (an agent given a budget, say); uncaught, it
ends the trial as a sample limit does, and the trial is scored on the state it reached.
"""

from __future__ import annotations

import time
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any

from assay.model._budget import LimitExceeded
from assay.model._output import ModelUsage


class LimitExceededError(LimitExceeded):
    """A limit was passed: ``type`` is ``token``, ``message``, ``time`` or ``working``;
    ``value`` what was used, ``limit`` what was allowed (Inspect's names)."""

    @property
    def type(self) -> str:
        """Which limit: the ``kind`` of ``LimitExceeded``."""
        return self.kind


class _Counted:
    """A limit counted on every model call inside its block."""

    kind = ""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.usage = 0
        self._token: Token[tuple[_Counted, ...]] | None = None

    def __enter__(self) -> Any:
        self._token = _active.set((*_active.get(), self))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _active.reset(self._token)
            self._token = None

    def charge(self, messages: int, usage: ModelUsage) -> None:
        """Count one call (*messages* in the conversation it answered)."""
        raise NotImplementedError

    def check(self) -> None:
        if self.limit is not None and self.usage > self.limit:
            raise LimitExceededError(self.kind, self.usage, self.limit)


class _TokenLimit(_Counted):
    kind = "token"

    def charge(self, messages: int, usage: ModelUsage) -> None:
        self.usage += usage.total_tokens
        self.check()


class _MessageLimit(_Counted):
    kind = "message"

    def charge(self, messages: int, usage: ModelUsage) -> None:
        self.usage = messages + 1  # the conversation with the answer appended
        self.check()


_active: ContextVar[tuple[_Counted, ...]] = ContextVar("assay_scoped_limits", default=())


def charge_scoped_limits(messages: int, usage: ModelUsage) -> None:
    """Count a model call against every limit whose block it is in."""
    for limit in _active.get():
        limit.charge(messages, usage)


def token_limit(limit: int | None) -> _TokenLimit:
    """At most *limit* tokens (input and output) over the model calls of the block."""
    return _TokenLimit(limit)


def message_limit(limit: int | None) -> _MessageLimit:
    """At most *limit* messages in a conversation a model call of the block answers."""
    return _MessageLimit(limit)


class _Clock:
    """A block cut off after *limit* seconds (anyio cancellation)."""

    def __init__(self, kind: str, limit: float | None) -> None:
        self.kind, self.limit = kind, limit
        self._scope: Any = None
        self._started = 0.0

    def __enter__(self) -> _Clock:
        import anyio

        self._started = time.monotonic()
        if self.limit is not None:
            self._scope = anyio.CancelScope(deadline=anyio.current_time() + self.limit)
            self._scope.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        if self._scope is None:
            return False
        handled = bool(self._scope.__exit__(kind, error, trace))
        if self._scope.cancelled_caught and self.limit is not None:
            used = time.monotonic() - self._started
            raise LimitExceededError(self.kind, used, self.limit) from None
        return handled


def time_limit(limit: float | None) -> _Clock:
    """At most *limit* seconds of wall time for the block."""
    return _Clock("time", limit)


def working_limit(limit: float | None) -> _Clock:
    """At most *limit* seconds for the block. Unlike Inspect's, time spent waiting for
    a connection or a retry counts too: here it is ``time_limit``."""
    return _Clock("working", limit)
