"""A first-come queue of tasks waiting for a slot that another task hands them.

The run's trial slots (``assay._slots``) and a model's connection gate
(``assay.model._gate``) both count holders against a limit that moves (a parked trial
gives its slot away, a burst of 429s halves the connections), so neither is an
``anyio.CapacityLimiter``; what they share is the waiting: whoever frees a slot counts
the longest waiter in and wakes it, and a waiter cancelled after it was counted in gives
the slot back. A ``deque`` itself, so that the fast paths' ``if waiters`` stays a C call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio


class Waiters(deque[anyio.Event]):
    """Tasks waiting for a slot, longest first."""

    __slots__ = ()

    async def wait(self, give_back: Callable[[], None]) -> None:
        """Wait until ``hand_over`` picks this task; cancelled after that, *give_back*
        the slot it was handed (the caller's release), so none leaks."""
        event = anyio.Event()
        self.append(event)
        try:
            await event.wait()
        except BaseException:
            if event.is_set():
                give_back()
            else:
                self.remove(event)
            raise

    def hand_over(self) -> None:
        """Wake the longest waiter, which the caller has just counted as a holder."""
        self.popleft().set()
