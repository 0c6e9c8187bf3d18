"""Trial slots: a trial waiting out a retry does not count against ``max_samples``.

A run keeps at most ``limit`` trials *working* (the CLI's ``-j``, Python's
``max_samples``). A trial that sleeps before retrying (a model call's ``Retry-After`` or
backoff, a trial attempt's backoff) does no work and holds no connection; if it kept its
slot, a server refusing one call in ten would leave a third of the connections idle. So
``retry_wait`` *parks* it: its slot goes to a new trial while it sleeps. When it wakes it
goes on at once, without waiting for a slot (so it can never deadlock against the trials
that took its place, whatever they wait on); the run starts no new trial until the
working count is back under the limit.

Memory stays bounded: at most ``PARKED_PER_SLOT × limit`` trials are parked, as the
executor runs at most that many more workers than slots (it adds one only when a trial
parks and no worker is free, so the bound costs nothing until waits need it). A trial
holding sandboxes is *pinned* (``pinned``): it keeps its slot while it sleeps, so the
sandboxes alive stay as many as the trials working.

Both retry layers (``assay.model`` and ``assay.run``) call ``retry_wait``; outside a run's
executor (a test calling ``run_trial``, a cluster worker) it is a plain sleep.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

import anyio

from assay._waiters import Waiters

PARKED_PER_SLOT = 8
"""Trials that may be parked per working slot (the executor's extra workers). A slot
needs as many as its trials spend waiting for each second working: a 1 s ``Retry-After``
on 10 % of 50 ms calls is about 2 on average, on 30 % of 100 ms calls about 3, and the
waits come in clumps. With 2, the run at 30 % 429s held 22 of 30 connections (a slot
free and no worker to take it 78–90 % of the time); with 8, 28 of 30."""


class TrialSlots:
    """At most ``limit`` trials start while ``working`` is at the limit; parked trials
    give their slot back and take it again without waiting."""

    __slots__ = ("grow", "limit", "parked", "waiting", "working")

    def __init__(self, limit: int, grow: Callable[[], None] | None = None) -> None:
        self.limit = max(1, limit)
        self.working = 0
        self.parked = 0
        self.grow = grow  # called as a trial parks: the executor may add a worker
        self.waiting = Waiters()  # the executor's worker reads it (``start``, inlined)

    async def start(self) -> None:
        """Wait until a new trial may start, and count it working."""
        if self.working < self.limit and not self.waiting:
            self.working += 1
            return
        await self.waiting.wait(self.finish)

    def finish(self) -> None:
        """A working trial is done: its slot goes to whoever waits."""
        self.working -= 1
        self.wake()

    def park(self) -> None:
        """A working trial sleeps before a retry: its slot is free meanwhile."""
        self.parked += 1
        idle = bool(self.waiting)  # a worker waits to start a trial: it takes the slot
        self.finish()
        if not idle and self.grow is not None:
            self.grow()

    def unpark(self) -> None:
        """A parked trial wakes: it works again at once, over the limit if need be."""
        self.parked -= 1
        self.working += 1

    def wake(self) -> None:
        """Count waiters in while slots are free, longest first."""
        while self.waiting and self.working < self.limit:
            self.working += 1
            self.waiting.hand_over()


class Lease:
    """One worker's hold on the slots, as its trials see it (``retry_wait``)."""

    __slots__ = ("pinned", "sleepers", "slots")

    def __init__(self, slots: TrialSlots) -> None:
        self.slots = slots
        self.pinned = False
        self.sleepers = 0  # a trial may wait on several calls at once: park once


_lease: ContextVar[Lease | None] = ContextVar("assay_trial_lease", default=None)


def bind(lease: Lease) -> None:
    """Make *lease* the current task's (the executor's worker calls this once)."""
    _lease.set(lease)


async def retry_wait(seconds: float) -> None:
    """Sleep *seconds* before a retry, the trial's slot free meanwhile (see the module
    doc); a plain sleep outside a run or for a pinned trial."""
    lease = _lease.get()
    if lease is None or lease.pinned:
        await anyio.sleep(seconds)
        return
    lease.sleepers += 1
    if lease.sleepers == 1:
        lease.slots.park()
    try:
        await anyio.sleep(seconds)
    finally:
        lease.sleepers -= 1
        if lease.sleepers == 0:
            lease.slots.unpark()


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Inside the block the current trial keeps its slot while it waits to retry."""
    lease = _lease.get()
    if lease is None:
        yield
        return
    lease.pinned = True
    try:
        yield
    finally:
        lease.pinned = False
