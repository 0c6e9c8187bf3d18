"""Trial slots: a trial waiting to retry gives its slot to another trial (``assay._slots``,
``run/_executor``). Each test drives the real executor with items that wait on events
the test controls, so what is asserted is who ran at once, never how long anything took."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from assay._slots import PARKED_PER_SLOT, pinned, retry_wait
from assay.run import execute

FOREVER = 3600.0  # a retry wait the test ends by cancelling it


class Items:
    """Counts the items working at once (not parked) and the most seen."""

    def __init__(self) -> None:
        self.working = 0
        self.most = 0
        self.started: list[int] = []

    def start(self, item: int) -> None:
        self.started.append(item)
        self.working += 1
        self.most = max(self.most, self.working)

    def stop(self) -> None:
        self.working -= 1


def test_a_trial_waiting_to_retry_lets_others_run_up_to_the_limit() -> None:
    """Items 1.. wait until ``limit`` of them work at once: only possible if item 0,
    waiting to retry, gave its slot away (else the test times out)."""
    items, limit = Items(), 3

    async def main() -> None:
        wait = anyio.CancelScope()
        together = anyio.Event()

        async def work(item: int) -> None:
            items.start(item)
            try:
                if item == 0:
                    items.stop()  # it sleeps: not working
                    with wait:
                        await retry_wait(FOREVER)
                    items.start(item)
                    return
                if items.working == limit:
                    together.set()
                await together.wait()
                if item == 10:
                    wait.cancel()  # the last: item 0's wait ends
            finally:
                items.stop()

        with anyio.fail_after(30):
            await execute(range(11), work, limit)

    anyio.run(main)
    assert sorted(items.started) == [0, *range(11)]  # item 0 twice: before and after its wait
    assert items.most == limit  # never more working than the limit


@pytest.mark.doc("docs/cli.md", "so at most 9 × `-j` trials are in memory")
def test_parked_trials_are_bounded_so_memory_is() -> None:
    started: list[int] = []
    limit = 2
    most = limit * (1 + PARKED_PER_SLOT)
    done = anyio.Event()

    async def work(item: int) -> None:
        started.append(item)
        if len(started) == most:
            done.set()
        await retry_wait(FOREVER)  # every trial waits to retry: each one parks

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(execute, range(100), work, limit)
            with anyio.fail_after(30):  # none parked: only `limit` ever start
                await done.wait()
            for _ in range(50):  # let any trial that could still start, start
                await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()

    anyio.run(main)
    assert started == list(range(most))  # no more than limit + parked, in plan order


def test_a_waking_trial_goes_on_without_waiting_for_a_slot() -> None:
    """Item 1 took item 0's slot and waits for item 0 to move on: had item 0 needed a
    slot to wake, neither would ever finish."""
    moved_on = anyio.Event()
    order: list[str] = []

    async def work(item: int) -> None:
        if item == 0:
            await retry_wait(0)
            order.append("0 woke")
            moved_on.set()
        else:
            order.append("1 started")
            await moved_on.wait()
            order.append("1 done")

    async def main() -> None:
        with anyio.fail_after(30):  # a deadlock fails the test instead of hanging it
            await execute(range(2), work, 1)

    anyio.run(main)
    assert order == ["1 started", "0 woke", "1 done"]


def test_a_pinned_trial_keeps_its_slot_while_it_waits() -> None:
    order: list[str] = []

    async def work(item: int) -> None:
        order.append(f"{item} started")
        if item == 0:
            with pinned():  # as a trial holding sandboxes is
                await retry_wait(0)
        order.append(f"{item} done")

    async def main() -> None:
        await execute(range(2), work, 1)

    anyio.run(main)
    assert order == ["0 started", "0 done", "1 started", "1 done"]


@pytest.mark.parametrize("limit", [1, 4])
def test_every_item_runs_once_in_plan_order_of_start(limit: int) -> None:
    started: list[int] = []

    async def work(item: int) -> None:
        started.append(item)
        if item % 3 == 0:
            await retry_wait(0)  # parks and wakes at once

    async def main() -> None:
        await execute(range(50), work, limit)

    anyio.run(main)
    assert started == list(range(50))


def test_outside_a_run_a_retry_wait_is_a_plain_sleep() -> None:
    async def main() -> None:
        await retry_wait(0)
        with pinned():
            await retry_wait(0)

    anyio.run(main)


def test_the_first_trials_go_on_while_the_later_ones_start() -> None:
    """Workers start in waves of ``WAVE``: between waves the loop runs, so the first
    trials reach their model (their requests go out) while the later ones start; in
    one wave of 200 the first request waited for all 200 trials to start."""
    from assay.run._executor import WAVE

    events: list[tuple[str, int]] = []
    limit = 3 * WAVE

    async def work(item: int) -> None:
        events.append(("start", item))
        await anyio.lowlevel.checkpoint()  # the trial's first call into its model
        events.append(("on", item))

    anyio.run(execute, range(limit), work, limit)
    assert sorted(i for kind, i in events if kind == "start") == list(range(limit))
    last_start = events.index(("start", limit - 1))
    assert ("on", 0) in events[:last_start]  # the first went on before the last started
    assert events.index(("start", WAVE - 1)) < events.index(("on", 0))  # a wave at once


def test_ramped_is_called_once_the_first_waves_are_started() -> None:
    """``execute`` tells its caller when it has started its first workers (the run
    then loads its report's template in the wait for the first answers)."""
    from assay.run._executor import WAVE

    events: list[tuple[str, int]] = []
    limit = 3 * WAVE

    async def work(item: int) -> None:
        events.append(("start", item))
        await anyio.lowlevel.checkpoint()

    anyio.run(execute, range(2 * limit), work, limit, lambda: events.append(("ramped", 0)))
    assert events.count(("ramped", 0)) == 1
    ramped = events.index(("ramped", 0))
    assert ("start", limit - WAVE - 1) in events[:ramped]  # the waves before the last
    assert ("start", 2 * limit - 1) in events[ramped:]  # long before the run's end
