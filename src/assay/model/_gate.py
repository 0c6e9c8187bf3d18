"""The connection gate of one model: AIMD, like TCP's congestion window.

At most ``limit`` calls are in flight. A rate-limited call (429) halves the limit
(multiplicative decrease, never below 1); each successful call adds ``1/limit``, so the
limit grows back by about one connection per window of calls (additive increase), up to
``maximum``. Only one decrease happens per window: many calls that were already in
flight when the server started refusing all come back 429 together, and that is one
signal, not fifty. A call knows its window by the ``generation`` ``acquire`` returned.

Hand-written rather than ``anyio.CapacityLimiter`` because its limit must move while
calls hold slots; the fast path (a free slot, nobody waiting) does not suspend.
"""

from __future__ import annotations

from collections import deque

import anyio


class AdaptiveGate:
    """At most ``limit`` holders at once; the limit moves between 1 and ``maximum``."""

    __slots__ = ("_waiters", "decreases", "generation", "in_flight", "limit", "maximum")

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = float(self.maximum)
        self.in_flight = 0
        self.generation = 0
        self.decreases = 0
        self._waiters: deque[anyio.Event] = deque()

    @property
    def window(self) -> int:
        """Calls allowed in flight now (the integer part of ``limit``)."""
        return int(self.limit)

    async def acquire(self) -> int:
        """Wait for a slot; return the window generation the call starts in."""
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
            return self.generation
        event = anyio.Event()
        self._waiters.append(event)
        try:
            await event.wait()
        except BaseException:
            if event.is_set():  # handed a slot as we were cancelled: give it back
                self.release()
            else:
                self._waiters.remove(event)
            raise
        return self.generation

    def release(self) -> None:
        """Give a slot back (after any outcome) and wake whoever now fits."""
        self.in_flight -= 1
        self._wake()

    def succeeded(self) -> None:
        """A call went through: grow the limit by ``1/limit`` (one per window)."""
        if self.limit < self.maximum:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
            self._wake()

    def throttled(self, generation: int) -> None:
        """A call started in *generation* was rate-limited: halve the limit, once per
        window (a call from an older window is part of a decrease already made)."""
        if generation != self.generation:
            return
        self.limit = max(1.0, self.limit / 2.0)
        self.generation += 1
        self.decreases += 1

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            self.in_flight += 1
            self._waiters.popleft().set()
