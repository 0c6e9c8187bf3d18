"""The connection gate of one model: AIMD, like TCP's congestion window, on bursts only.

At most ``limit`` calls are in flight. Each successful call adds ``1/limit``, so the
limit grows by about one connection per window of calls (additive increase), up to
``maximum``. A *burst* of rate-limited calls (429) halves it (multiplicative decrease,
never below 1).

A window is the calls started in one ``generation`` (``acquire`` says which); it closes
once as many of them have come back as the window allowed in flight, and never fewer than
``MIN_WINDOW``. Its 429s are a burst when they are more than half of it: a server over
its rate refuses most of what goes beyond it. A server that refuses one call in ten at
random is not asking for fewer connections, and the rule must not read it so at any
rate or limit: the share is judged over at least ``MIN_WINDOW`` calls, so that a small
window's chance (two 429s in five calls happen often at 10 %) cannot halve the limit
again and again. Once a rule like that fired, the next, smaller windows fired more
easily, and random 429s held the limit near five of a hundred connections for the rest
of the run. An isolated 429 only makes its own call wait (the server's ``Retry-After``,
else the backoff) while the others go on. Calls of an older window are part of a
decision already made: many calls in flight when the server started refusing come back
429 together, and that is one signal, not fifty.

The gate also counts the server's failures in a row (``failures_in_a_row``: 429, 5xx,
timeouts, dropped connections, whichever call they came from, until any call succeeds).
A call's backoff doubles with its own failures only as far as that count goes
(``assay.model._calls``): against a server that is down, the two are the same and the
backoff grows as it always did; against one that fails a share of calls at random, the
others' answers keep the count near one, and every retry waits like a first one. A call
failing three times in a row is then chance (one call in 64 at 25 %), and doubling its
wait only made the trials that met such a run of luck at the end of the plan the run's
last seconds.

Not an ``anyio.CapacityLimiter`` because its limit must move while calls hold slots;
the waiting is ``assay._waiters``, and the fast path (a free slot, nobody waiting) does
not suspend.
"""

from __future__ import annotations

from assay._waiters import Waiters

BURST_SHARE = 0.5
"""A window whose 429s are more than this share of it is a burst."""
MIN_WINDOW = 32
"""The fewest calls a window holds, whatever the limit: with 10 % of calls refused at
random, more than half of 32 are about once in a billion windows (at 20 %, once in
30,000); two that are more than a fifth of 5 calls (the rule this replaced), once in 12."""


class AdaptiveGate:
    """At most ``limit`` holders at once; the limit moves between 1 and ``maximum``."""

    __slots__ = (
        "_refused",
        "_returned",
        "_waiters",
        "_window_size",
        "decreases",
        "failures_in_a_row",
        "generation",
        "in_flight",
        "limit",
        "maximum",
    )

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = float(self.maximum)
        self.in_flight = 0
        self.generation = 0
        self.decreases = 0
        self.failures_in_a_row = 0  # the server's, any call's, since the last success
        self._waiters = Waiters()
        self._window_size = max(MIN_WINDOW, self.maximum)
        self._returned = 0  # calls of this window back so far
        self._refused = 0  # of which rate-limited

    @property
    def window(self) -> int:
        """Calls allowed in flight now (the integer part of ``limit``)."""
        return int(self.limit)

    def enter(self) -> int | None:
        """Take a slot if one is free and nobody waits: the window generation the call
        starts in; None if the caller must ``await acquire()`` (a call's fast path then
        makes no coroutine)."""
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
            return self.generation
        return None

    async def acquire(self) -> int:
        """Wait for a slot; return the window generation the call starts in."""
        generation = self.enter()
        if generation is not None:
            return generation
        await self._waiters.wait(self.release)
        return self.generation

    def release(self) -> None:
        """Give a slot back (after any outcome) and wake whoever now fits."""
        self.in_flight -= 1
        self._wake()

    def succeeded(self, generation: int | None = None) -> None:
        """A call (started in *generation*) went through: grow the limit by ``1/limit``."""
        self.failures_in_a_row = 0
        if self.limit < self.maximum:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
            self._wake()
        if generation == self.generation:
            self._returned += 1
            if self._returned >= self._window_size:
                self._next_window()

    def answered(self, generation: int) -> None:
        """``succeeded(generation)`` then ``release()``, as one call: a call's common
        end (at the limit and with nobody waiting, a few counters)."""
        self.failures_in_a_row = 0
        self.in_flight -= 1
        if self.limit < self.maximum:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        if generation == self.generation:
            self._returned += 1
            if self._returned >= self._window_size:
                self._next_window()
        if self._waiters:
            self._wake()

    def throttled(self, generation: int) -> None:
        """A call started in *generation* was rate-limited: halve the limit if its window
        now holds a burst (a call from an older window is part of a decision made)."""
        self.failures_in_a_row += 1
        if generation != self.generation:
            return
        self._returned += 1
        self._refused += 1
        if self._refused > BURST_SHARE * self._window_size:
            self.limit = max(1.0, self.limit / 2.0)
            self.decreases += 1
            self._next_window()
        elif self._returned >= self._window_size:
            self._next_window()

    def failed(self) -> None:
        """A call failed otherwise (5xx, a timeout, a dropped connection): one more of the
        server's failures in a row; the limit stays (a burst of 429s is the server's
        word for "fewer")."""
        self.failures_in_a_row += 1

    def _next_window(self) -> None:
        self.generation += 1
        self._window_size = max(MIN_WINDOW, int(self.limit))
        self._returned = self._refused = 0

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            self.in_flight += 1
            self._waiters.hand_over()
