"""The AIMD connection gate on its own: it bounds calls in flight, halves its limit once
per window holding a burst of rate-limited calls (never for isolated ones), grows back by
one per window, and a cancelled waiter never leaks a slot.

The tests wait with ``anyio.wait_all_tasks_blocked()``: every other task has gone as far
as it can (waiting on the gate), which is what they need to know, where a fixed sleep
would only hope so.
"""

from __future__ import annotations

import anyio
import pytest

from assay.model import AdaptiveGate


def test_it_never_lets_more_than_the_limit_in() -> None:
    gate = AdaptiveGate(3)
    peak = 0

    async def call() -> None:
        nonlocal peak
        await gate.acquire()
        peak = max(peak, gate.in_flight)
        await anyio.sleep(0.001)
        gate.release()

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(call)

    anyio.run(main)
    assert peak == 3
    assert gate.in_flight == 0


def test_a_burst_of_rate_limits_halves_the_limit_once_per_window() -> None:
    gate = AdaptiveGate(16)
    generation = gate.generation
    for _ in range(10):  # ten calls of one window come back 429 together: one decrease
        gate.throttled(generation)
    assert (gate.limit, gate.decreases) == (8.0, 1)
    for _ in range(2):  # two of the next window's eight: a quarter of it, a burst
        gate.throttled(gate.generation)
    assert (gate.window, gate.decreases) == (4, 2)
    for _ in range(20):
        gate.throttled(gate.generation)
    assert gate.window == 1  # never below one


def test_isolated_rate_limits_never_shrink_the_limit() -> None:
    """A server refusing one call in ten (or one in five) at random is not asking for
    fewer connections: the limit stays at its maximum over thousands of calls."""
    for every in (10, 5):
        gate = AdaptiveGate(100)
        for call in range(5000):
            generation = gate.generation
            if call % every == 0:
                gate.throttled(generation)
            else:
                gate.succeeded(generation)
        assert (gate.window, gate.decreases) == (100, 0), every


def test_one_refusal_more_than_a_fifth_of_a_window_is_a_burst() -> None:
    gate = AdaptiveGate(10)
    generation = gate.generation
    gate.throttled(generation)
    gate.throttled(generation)  # two of ten: a fifth, not more
    assert gate.decreases == 0
    gate.throttled(generation)
    assert (gate.window, gate.decreases) == (5, 1)


def test_successes_grow_the_limit_back_by_about_one_per_window() -> None:
    gate = AdaptiveGate(8)
    for _ in range(2):
        generation = gate.generation
        gate.throttled(generation)
        gate.throttled(generation)
    assert gate.window == 2
    gate.succeeded(gate.generation)
    gate.succeeded(gate.generation)  # 2 + 1/2 + 1/2.5
    assert gate.window == 2
    gate.succeeded(gate.generation)
    assert gate.window == 3
    for _ in range(100):
        gate.succeeded(gate.generation)
    assert gate.limit == 8.0  # capped at the maximum


def test_a_shrunk_gate_admits_waiters_as_it_grows() -> None:
    gate = AdaptiveGate(4)
    admitted: list[int] = []

    async def main() -> None:
        for _ in range(4):
            await gate.acquire()
        gate.throttled(gate.generation)
        gate.throttled(gate.generation)  # a burst: limit 2, but 4 still in flight

        async def wait(i: int) -> None:
            await gate.acquire()
            admitted.append(i)

        async with anyio.create_task_group() as group:
            for i in range(3):
                group.start_soon(wait, i)
            await anyio.wait_all_tasks_blocked()
            gate.release()
            gate.release()
            gate.release()  # 1 in flight, limit 2: one waiter fits
            await anyio.wait_all_tasks_blocked()
            assert admitted == [0]
            for _ in range(3):
                gate.succeeded()  # the limit reaches 3: one more
            await anyio.wait_all_tasks_blocked()
            assert admitted == [0, 1]
            gate.release()
            gate.release()

    anyio.run(main)
    assert admitted == [0, 1, 2]


@pytest.mark.parametrize("handed_over", [False, True])
def test_a_cancelled_waiter_leaks_no_slot(handed_over: bool) -> None:
    gate = AdaptiveGate(1)

    async def call() -> None:
        await gate.acquire()  # as Model uses it: a slot acquired is released
        try:
            await anyio.sleep(1)
        finally:
            gate.release()

    async def main() -> None:
        await gate.acquire()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await anyio.wait_all_tasks_blocked()  # call() waits for the slot
                if handed_over:
                    gate.release()  # the slot goes to the waiter, which is then cancelled
                scope.cancel()
        if not handed_over:
            gate.release()

    anyio.run(main)
    assert gate.in_flight == 0
    assert not gate._waiters
