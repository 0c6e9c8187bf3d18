"""Inspect's ``span`` and ``subtask``: named parts of a trial, nested in its evidence.

A span is a ``span_begin`` event that every event recorded inside the block names as its
parent (model calls, tool calls, inner spans), closed by a ``span_end`` event under it. A
subtask is an async function whose every call is such a span of type ``subtask``, its
``span_begin`` carrying the call's arguments and its ``span_end`` the result (or the
error), so ``assay show`` and a reader of the events see what the subtask was asked, what
it did and what it gave back. Outside a trial both are plain code: nothing is recorded.

Spans parent events through the trial's one open scope, so a trial's spans nest as its
code nests; subtasks of one trial run at once (``asyncio.gather``) would interleave
their events' parents.
"""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, ParamSpec, TypeVar, overload

from assay._registry import json_safe
from assay.evidence import current_recorder

P = ParamSpec("P")
R = TypeVar("R")


@asynccontextmanager
async def span(name: str, *, type: str | None = None) -> AsyncIterator[str]:
    """Mark the events of the block as one named part of the trial (Inspect's
    ``async with span("name"):``); yields the span's id."""
    async with _span(name, type, {}) as (span_id, _):
        yield span_id


@asynccontextmanager
async def _span(
    name: str, kind: str | None, begin: dict[str, Any]
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """A span whose ``span_end`` carries what the block puts in the yielded dict."""
    span_id = uuid.uuid4().hex
    end: dict[str, Any] = {}
    recorder = current_recorder()
    data = {"id": span_id, "name": name, **({"type": kind} if kind else {}), **begin}
    number = recorder.record_if_open("span_begin", data) if recorder is not None else None
    if recorder is None or number is None:
        yield span_id, end
        return
    with recorder.scope(number):
        try:
            yield span_id, end
        except BaseException as exc:
            end.setdefault("error", f"{type_name(exc)}: {exc}")
            raise
        finally:
            recorder.record_if_open("span_end", {"id": span_id, "name": name, **end})


def type_name(exc: BaseException) -> str:
    """The exception's class name, as an error line shows it."""
    return exc.__class__.__name__


@overload
def subtask(func: Callable[P, Awaitable[R]], /) -> Callable[P, Awaitable[R]]: ...


@overload
def subtask(
    func: None = None, /, *, name: str | None = None, type: str | None = None
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]: ...


def subtask(
    func: Callable[P, Awaitable[R]] | None = None,
    /,
    *,
    name: str | None = None,
    type: str | None = None,
) -> Any:
    """Record every call of an async function as a span of type ``subtask`` (``@subtask``
    or ``@subtask(name=...)``, as in Inspect): its arguments, its events, its result."""

    def decorate(inner: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        if not inspect.iscoroutinefunction(inner):
            raise TypeError(f"@subtask needs an async function, not {inner!r}")
        label = name or inner.__name__
        signature = inspect.signature(inner)

        @functools.wraps(inner)
        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            bound = signature.bind_partial(*args, **kwargs)
            given = {"input": json_safe(dict(bound.arguments))}
            async with _span(label, type or "subtask", given) as (_, end):
                result = await inner(*args, **kwargs)
                end["result"] = json_safe(result)
                return result

        return call

    return decorate(func) if func is not None else decorate
