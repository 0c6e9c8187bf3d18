"""Bounded concurrency over a stream of work: N workers pull from one iterator.

Workers pull the next item only when they are free, so no more than *limit* items are in
flight and nothing is materialised ahead of time: memory follows the concurrency, not
the size of the plan. Results are handed to the caller as each item finishes; callers
that need plan order sort by the plan index every result carries. The garbage collector
is tuned while items run (``_gc``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio
import anyio.lowlevel

from assay.run._gc import collector_tuned
from assay.run._groups import first_error

T = TypeVar("T")


async def execute(items: Iterable[T], work: Callable[[T], Awaitable[None]], limit: int) -> None:
    """Run ``work(item)`` for every item, at most *limit* at a time."""
    iterator = iter(items)
    checkpoint = _checkpoint()

    async def worker() -> None:
        for item in iterator:
            await work(item)
            # A target that answers without ever pausing would starve the event loop:
            # cancelled timers would pile up (with the trials they reference) until the
            # run ends. One checkpoint per trial lets the loop clean up as it goes.
            await checkpoint()

    try:
        with collector_tuned():
            async with anyio.create_task_group() as group:
                for _ in range(max(1, limit)):
                    group.start_soon(worker)
    except BaseExceptionGroup as group:
        # Several workers may fail at once for one reason (a sink over its failure rate):
        # the caller wants that reason, not a group of copies.
        raise first_error(group) from None


def _checkpoint() -> Callable[[], Awaitable[None]]:
    """anyio's ``checkpoint`` for the running loop, looked up once: on asyncio it is
    ``sleep(0)``, but ``anyio.lowlevel.checkpoint`` finds the backend again on every call
    (2 % of a trivial trial's CPU)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        return anyio.lowlevel.checkpoint
    return functools.partial(asyncio.sleep, 0)
