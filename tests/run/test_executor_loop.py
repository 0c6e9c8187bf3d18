"""The executor lets the event loop run while trials never pause (``run/_executor``).

A target that answers without ever awaiting anything would keep the loop from running:
each trial's cancelled timers (a timeout it did not need) would pile up, with the trials
they reference, until the run ends. The workers checkpoint every ``CHECKPOINT_EVERY``
trials, so the loop drops them as it goes and memory stays flat however long the run.
"""

from __future__ import annotations

import asyncio

import anyio

from assay.run import execute
from assay.run._executor import CHECKPOINT_EVERY


def test_trials_that_never_pause_leave_no_pile_of_cancelled_timers() -> None:
    items, limit = 20_000, 4
    most = 0

    async def work(item: int) -> None:
        nonlocal most
        with anyio.move_on_after(3600):  # a timer made and cancelled, never awaited
            pass
        most = max(most, len(asyncio.get_running_loop()._scheduled))  # type: ignore[attr-defined]

    anyio.run(execute, range(items), work, limit)
    # asyncio drops cancelled timers once they are over half of those held (and > 100):
    # bounded by what a checkpoint lets through, not by the run's length
    assert most <= max(250, 4 * limit * CHECKPOINT_EVERY)
