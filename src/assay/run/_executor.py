"""Bounded concurrency over a stream of work: workers pull from one iterator.

Workers pull the next item only when a trial slot is free (``assay._slots``), so no
more than *limit* items are working at once and nothing is materialised ahead of time:
memory follows the concurrency, not the size of the plan. An item that sleeps before a
retry parks: its slot goes to a new item, and the executor adds a worker for it, up to
``PARKED_PER_SLOT`` extra workers per slot (the bound on items in memory). Results are
handed to the caller as each item finishes; callers that need plan order sort by the
plan index every result carries. The garbage collector is tuned while items run
(``_gc``). The workers start ``WAVE`` at a time with the loop run in between: a
network run's first requests then go out while its later trials start (at 500
connections the first request waited 53 ms for all 500 trials to start, 11 ms in
waves of 32; at 200, waves of 8 write it 4 ms after the first call instead of 23 ms
with 32, medians on a loaded machine), so its first answers come back sooner. A
worker's checkpoint is skipped when the loop already ran a pass during its last
``CHECKPOINT_EVERY`` trials (``_Pace``): a network trial always lets it run, and its
next request should not queue behind every answer ready in that pass.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio
import anyio.abc

from assay._slots import PARKED_PER_SLOT, Lease, TrialSlots, bind
from assay.run._gc import collector_tuned
from assay.run._groups import first_error
from assay.run._pace import _checkpoint, _pacer

T = TypeVar("T")
WAVE = 8
"""Workers started at a time; between waves the loop runs (module doc). A trial's first
request goes out in the pass after its connection opens, so about two waves after it
starts: the smaller the wave, the sooner the first requests leave."""
CHECKPOINT_EVERY = 8
"""Trials a worker runs between two checkpoints (each a pass of the event loop, unless
one came by itself: ``_Pace``)."""


async def execute(
    items: Iterable[T],
    work: Callable[[T], Awaitable[None]],
    limit: int,
    ramped: Callable[[], None] | None = None,
) -> None:
    """Run ``work(item)`` for every item, at most *limit* working at a time; *ramped* is
    called once all the first workers are started (a network run's first requests are
    then out or about to be, and the loop waits for their answers)."""
    iterator = iter(items)
    checkpoint = _checkpoint()
    pace = _pacer(checkpoint)
    limit = max(1, limit)
    most = limit * (1 + PARKED_PER_SLOT)
    workers = 0
    exhausted = False
    group: anyio.abc.TaskGroup | None = None

    async def worker() -> None:
        nonlocal exhausted
        bind(Lease(slots))
        paced = pace()
        done = 0
        while True:
            if slots.working < slots.limit and not slots.waiting:
                slots.working += 1  # slots.start's fast path: no coroutine made a trial
            else:
                await slots.start()
            try:
                try:
                    item = next(iterator)
                except StopIteration:
                    exhausted = True
                    return
                await work(item)
            finally:
                slots.working -= 1  # slots.finish, inlined: a slot goes to a waiter if any
                if slots.waiting:
                    slots.wake()
            # A target that answers without ever pausing would starve the event loop:
            # cancelled timers would pile up (with the trials they reference) until the
            # run ends. A checkpoint every CHECKPOINT_EVERY trials lets the loop clean up
            # as it goes (a worker's trials hold at most that many trials' timers).
            done += 1
            if done == CHECKPOINT_EVERY:
                done = 0
                await paced()

    def grow() -> None:
        """A trial parked: one more worker may start a trial in its place."""
        nonlocal workers
        if group is not None and workers < most and not exhausted:
            workers += 1
            group.start_soon(worker)

    slots = TrialSlots(limit, grow)
    try:
        with collector_tuned():
            async with anyio.create_task_group() as group:
                for started in range(limit):
                    if started and not started % WAVE:
                        await checkpoint()  # the trials started so far go out first
                    workers += 1
                    group.start_soon(worker)
                if ramped is not None:
                    ramped()
    except BaseExceptionGroup as errors:
        # Several workers may fail at once for one reason (a sink over its failure rate):
        # the caller wants that reason, not a group of copies.
        raise first_error(errors) from None
