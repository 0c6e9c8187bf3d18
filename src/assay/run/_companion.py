"""A worker's companion: it judges the worker's last trial while the worker's next
trial waits for its answer.

A poll of the loop wakes tens of trials of a network run at once; if each worker judged
its trial (sealed the bundle, scored it, wrote the score lines) before starting the
next, the last woken trial's next request would wait for every earlier trial's judging.
So a trial whose answer is in hands its judging (``Judging``) to its worker's companion
and the worker starts its next trial at once: the loop writes all the next requests
first, then judges. A companion judges one trial at a time: the worker hands it the
next only once the last is judged, so a worker keeps at most one trial being judged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from assay._slots import unbind

Judging = Callable[[], Awaitable[None]]
"""What is left of a trial once its answer is in: seal, judge and count it."""


class Companion:
    """Judges the trials its worker hands it, one at a time (module doc)."""

    __slots__ = ("_idle", "_judging", "_ready", "busy")

    def __init__(self) -> None:
        self._judging: Judging | None = None
        self._ready = anyio.Event()
        self._idle: anyio.Event | None = None  # the worker waits for the last judging
        self.busy = False

    async def hand(self, judging: Judging | None) -> None:
        """Give *judging* to the companion once its last is done (``None``: it stops)."""
        while self.busy:
            self._idle = anyio.Event()
            await self._idle.wait()
        self.busy = True
        self._judging = judging
        self._ready.set()

    async def run(self) -> None:
        """Judge what the worker hands, until it hands ``None``."""
        unbind()  # judging trials hold no slot: a grader's retry wait must not park
        while True:
            await self._ready.wait()
            self._ready = anyio.Event()
            judging, self._judging = self._judging, None
            if judging is None:
                return
            await judging()
            self.busy = False
            if self._idle is not None:
                self._idle.set()
                self._idle = None
