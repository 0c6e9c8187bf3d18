"""The executor lets the event loop run while trials never pause (``run/_executor``).

A target that answers without ever awaiting anything would keep the loop from running:
each trial's cancelled timers (a timeout it did not need) would pile up, with the trials
they reference, until the run ends. The workers checkpoint every ``CHECKPOINT_EVERY``
trials, so the loop drops them as it goes and memory stays flat however long the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio
import pytest

from assay.run import _executor, execute
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


def _counted_checkpoints(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The executor's checkpoints, counted (each still a real pass of the loop)."""
    made: list[int] = []
    real = _executor._checkpoint

    def counting() -> Callable[[], Awaitable[None]]:
        checkpoint = real()

        async def counted() -> None:
            made.append(1)
            await checkpoint()

        return counted

    monkeypatch.setattr(_executor, "_checkpoint", counting)
    return made


def test_trials_that_never_pause_still_checkpoint_every_few(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _counted_checkpoints(monkeypatch)

    async def work(item: int) -> None:
        pass

    anyio.run(execute, range(8 * CHECKPOINT_EVERY), work, 1)
    assert len(made) == 8  # one every CHECKPOINT_EVERY trials, as no pass came by itself


def test_trials_that_wait_on_the_loop_make_no_checkpoint_of_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A network trial lets the loop run while it waits for its answer: a checkpoint
    after it would only send the worker's next request behind every other answer
    ready in that pass."""
    made = _counted_checkpoints(monkeypatch)

    async def work(item: int) -> None:
        loop = asyncio.get_running_loop()
        answer = loop.create_future()
        loop.call_soon(answer.set_result, None)  # the answer, a pass of the loop later
        await answer

    anyio.run(execute, range(16 * CHECKPOINT_EVERY), work, 4)
    assert made == []
