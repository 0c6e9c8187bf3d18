"""``assay._waiters``: the first-come wait for a slot that the run's trial slots and a
model's connection gate share. A waiter cancelled before it was handed a slot leaves the
queue; one handed a slot and cancelled before it could take it gives the slot back (its
owner's release). Either way no slot is lost, in both of the real users.

On asyncio the give-back happens in one order only: the cancellation reaches the waiting
task first, and the slot is handed to it before it runs again. In the other order (the
slot handed first) anyio does not cancel a task whose wait has already ended: the waiter
returns holding the slot and is cancelled at its next checkpoint, where its caller's
``finally`` releases the slot. The three orders are made here, each step in one callback
with no checkpoint between, so what happens does not depend on scheduling.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import pytest

from assay._slots import TrialSlots
from assay._waiters import Waiters
from assay.model import AdaptiveGate

FOREVER = 3600.0  # the holder's work, ended by the test's cancellation


@dataclass
class Pool:
    """One user of ``Waiters``, seen through what the test needs of it."""

    take: Callable[[], Awaitable[None]]
    give: Callable[[], None]
    held: Callable[[], int]
    waiters: Waiters


def trial_slots() -> Pool:
    slots = TrialSlots(1)
    return Pool(slots.start, slots.finish, lambda: slots.working, slots.waiting)


def connection_gate() -> Pool:
    gate = AdaptiveGate(1)
    return Pool(gate.acquire, gate.release, lambda: gate.in_flight, gate._waiters)


@pytest.mark.parametrize("order", ["cancelled", "cancelled_then_handed", "handed_then_cancelled"])
@pytest.mark.parametrize("make", [trial_slots, connection_gate])
def test_a_cancelled_waiter_leaks_no_slot(make: Callable[[], Pool], order: str) -> None:
    pool = make()
    took: list[bool] = []

    async def user() -> None:
        await pool.take()  # as the executor and Model use it: a slot taken is given back
        took.append(True)
        try:
            await anyio.sleep(FOREVER)
        finally:
            pool.give()

    async def main() -> None:
        await pool.take()  # the only slot: user() waits for it
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(user)
                await anyio.wait_all_tasks_blocked()
                assert len(pool.waiters) == 1
                if order == "handed_then_cancelled":
                    pool.give()  # user()'s wait ends: it holds the slot
                scope.cancel()  # delivered to user() at once, unless its wait has ended
                if order == "cancelled_then_handed":
                    pool.give()  # to the cancelled user(), before it runs: it gives it back
        if order == "cancelled":
            pool.give()  # nobody waits any more: the slot is free

    anyio.run(main)
    assert (pool.held(), len(pool.waiters)) == (0, 0)
    assert took == ([True] if order == "handed_then_cancelled" else [])
