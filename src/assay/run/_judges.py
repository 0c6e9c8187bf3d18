"""Judging after the next request: a trial whose answer is in is judged once the loop
has sent the requests of the trials that took the slots.

A poll of the loop wakes tens of trials of a network run at once. If each worker judged
its trial (sealed the bundle, scored it, wrote the score lines) before starting the
next, the last woken trial's next request would wait for every earlier trial's judging
(at 200 connections a trial's cycle was ~5.5 ms longer than the server's 50 ms). So a
worker hands what is left of its trial (``Judging``) to ``Judges`` and starts its next
trial at once; a judge task drains the handed trials in the order they came, in one
pass of the loop when none of them waits on anything. A judging that waits (a
model-graded scorer's call) keeps its judge: before each judging with more queued
behind it, the judge wakes another to take the rest if it waits (at most one more
wakeup a pass when none does), and a trial handed meanwhile wakes another too.

At most ``most`` trials are handed and not yet judged; past that a worker judges its
trial itself before starting the next, as it did before, so memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable

import anyio

from assay._slots import unbind

Judging = Callable[[], Awaitable[None]]
"""What is left of a trial once its answer is in: seal, judge and count it."""


class Judges:
    """The trials handed to be judged, and the tasks judging them (module doc)."""

    __slots__ = ("_idle", "_queue", "_soon", "_start", "_waking", "closed", "handed", "most")

    def __init__(
        self, most: int, start: Callable[[], None], soon: Callable[[Callable[[], None]], object]
    ) -> None:
        self.most = most
        self._soon = soon  # runs a callback after the loop's current pass
        self.handed = 0  # handed and not yet judged
        self.closed = False
        self._start = start  # starts one more ``drain`` task
        self._queue: deque[Judging] = deque()
        self._idle: deque[anyio.Event] = deque()  # judges waiting for trials
        self._waking = False  # a judge is woken and will drain the queue

    def hand(self, judging: Judging) -> bool:
        """Queue *judging*; False when ``most`` are queued already (the caller judges)."""
        if self.handed >= self.most:
            return False
        self.handed += 1
        self._queue.append(judging)
        if not self._waking:
            self._waking = True
            self._soon(self._wake)  # after this pass: its workers' next trials go first
        return True

    def _wake(self) -> None:
        """Wake a judge (an idle one, else a new one) to drain the queue."""
        self._waking = True
        if self._idle:
            self._idle.popleft().set()
        else:
            self._start()

    def close(self) -> None:
        """No trial will be handed any more: the judges end once the queue is empty."""
        self.closed = True
        while self._idle:
            self._idle.popleft().set()

    async def drain(self) -> None:
        """Judge the queued trials in order; wait for more until ``close``."""
        unbind()  # judged trials hold no slot: a grader's retry wait must not park
        while True:
            self._waking = False  # trials handed from now on wake another judge
            while self._queue:
                judging = self._queue.popleft()
                if self._queue and not self._waking:
                    self._wake()  # if this judging waits, another judge takes the rest
                await judging()
                self.handed -= 1
            if self.closed:
                return
            woken = anyio.Event()
            self._idle.append(woken)
            await woken.wait()
