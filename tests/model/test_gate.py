"""The AIMD connection gate on its own: it bounds calls in flight, halves its limit once
per window holding a burst of rate-limited calls (never for random isolated ones, at any
limit), grows back by one per window (a cancelled waiter: ``tests/util/test_waiters.py``).

The tests wait with ``anyio.wait_all_tasks_blocked()``: every other task has gone as far
as it can (waiting on the gate), which is what they need to know, where a fixed sleep
would only hope so.
"""

from __future__ import annotations

import random

import anyio
import pytest

from assay.model import AdaptiveGate
from assay.model._gate import MIN_WINDOW


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
    gate = AdaptiveGate(40)
    generation = gate.generation
    for _ in range(30):  # thirty calls of one window come back 429 together: one decrease
        gate.throttled(generation)
    assert (gate.limit, gate.decreases) == (20.0, 1)
    for _ in range(17):  # 17 of the next window's 32: more than half, a burst
        gate.throttled(gate.generation)
    assert (gate.window, gate.decreases) == (10, 2)
    for _ in range(200):
        gate.throttled(gate.generation)
    assert gate.window == 1  # never below one


def test_more_than_half_of_a_window_refused_is_a_burst() -> None:
    gate = AdaptiveGate(40)
    generation = gate.generation
    for _ in range(20):
        gate.succeeded(generation)
    for _ in range(20):
        gate.throttled(generation)  # twenty of forty: half, not more
    assert (gate.generation, gate.decreases) == (generation + 1, 0)  # the window closed
    gate = AdaptiveGate(40)
    for _ in range(21):
        gate.throttled(gate.generation)
    assert (gate.window, gate.decreases) == (20, 1)


def test_a_small_window_still_judges_min_window_calls() -> None:
    """Below ``MIN_WINDOW`` connections the share is judged over ``MIN_WINDOW`` calls:
    two 429s in a window of four is chance at 10 % (one window in twenty), not a burst."""
    assert MIN_WINDOW == 32
    gate = AdaptiveGate(4)
    generation = gate.generation
    for _ in range(16):
        gate.throttled(generation)
    for _ in range(16):
        gate.succeeded(generation)
    assert (gate.generation, gate.window, gate.decreases) == (generation + 1, 4, 0)
    for _ in range(17):
        gate.throttled(gate.generation)
    assert (gate.window, gate.decreases) == (2, 1)


def calls_in_flight(gate: AdaptiveGate, calls: int, share: float, seed: int) -> None:
    """*calls* calls through *gate*, as many in flight as it allows, each finishing in a
    random order and refused (429) with probability *share*: the random 429s of a server
    that is not over its rate, at any call rate (the gate sees only the order)."""
    rng = random.Random(seed)
    flying: list[int] = []  # the generation each call in flight started in
    for _ in range(calls):
        while len(flying) < gate.window:
            flying.append(gate.generation)
        generation = flying.pop(rng.randrange(len(flying)))
        if rng.random() < share:
            gate.throttled(generation)
        else:
            gate.succeeded(generation)


@pytest.mark.parametrize("share", [0.1, 0.2])
@pytest.mark.parametrize("maximum", [4, 16, 100])
def test_random_isolated_rate_limits_never_shrink_the_limit(share: float, maximum: int) -> None:
    """A server refusing one call in ten (or one in five) at random is not asking for
    fewer connections: over 100,000 calls, at any limit, the limit never decreases."""
    gate = AdaptiveGate(maximum)
    calls_in_flight(gate, 100_000, share, seed=maximum)
    assert (gate.window, gate.decreases) == (maximum, 0)


def test_after_a_burst_random_rate_limits_let_the_limit_grow_back() -> None:
    """The limit a real burst lowered climbs back to its maximum under random 429s: the
    smaller windows after a decrease must not read chance as more bursts."""
    gate = AdaptiveGate(100)
    for _ in range(200):
        gate.throttled(gate.generation)
    assert gate.window == 1
    decreases = gate.decreases
    calls_in_flight(gate, 50_000, 0.1, seed=1)
    assert (gate.window, gate.decreases) == (100, decreases)


def test_successes_grow_the_limit_back_by_about_one_per_window() -> None:
    gate = AdaptiveGate(8)
    for _ in range(2):
        generation = gate.generation
        for _ in range(17):
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
        for _ in range(17):
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


def test_enter_takes_a_free_slot_at_once_and_never_one_a_waiter_is_owed() -> None:
    """``enter`` is ``acquire``'s fast path without a coroutine (a model call takes it
    first): a slot while one is free and nobody waits, else None."""
    gate = AdaptiveGate(2)
    assert (gate.enter(), gate.enter(), gate.enter()) == (0, 0, None)
    assert gate.in_flight == 2

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(gate.acquire)
            await anyio.wait_all_tasks_blocked()
            gate.release()  # the slot goes to the waiter
            assert gate.enter() is None
            await anyio.wait_all_tasks_blocked()
        gate.release()
        assert gate.enter() == gate.generation  # free again, nobody waiting

    anyio.run(main)
    assert gate.in_flight == 2


def test_it_counts_the_servers_failures_in_a_row_until_any_call_succeeds() -> None:
    """Any call's failure counts, whatever its window (an older window's 429 too), and
    any call's success ends the run: the count is the server's, not one call's."""
    gate = AdaptiveGate(4)
    gate.failed()
    gate.throttled(gate.generation)
    gate.throttled(gate.generation - 1)
    assert (gate.failures_in_a_row, gate.decreases) == (3, 0)
    gate.succeeded(gate.generation - 1)
    assert gate.failures_in_a_row == 0


def _counters(gate: AdaptiveGate) -> tuple[object, ...]:
    """Every field of *gate* but its waiters (its data attributes: a compiled build of
    ``_gate`` keeps its fields but has no ``__slots__`` to list them)."""
    names = (name for name in dir(gate) if not name.startswith("__") and name != "_waiters")
    return tuple(value for name in names if not callable(value := getattr(gate, name)))


@pytest.mark.parametrize("seed", range(4))
def test_answered_is_succeeded_then_release(seed: int) -> None:
    """A model call ends with ``answered`` (one call, not two): the gate's counters,
    limit and windows move exactly as with ``succeeded`` then ``release``, throttled
    windows and all."""
    rng = random.Random(seed)
    one, two = AdaptiveGate(6), AdaptiveGate(6)
    for step in range(3_000):
        share = 0.8 if step % 1_000 < 200 else 0.1  # bursts, then a few at random
        generation = one.enter()
        assert generation == two.enter()
        if generation is None:  # full: free a slot in both
            one.release()
            two.release()
            continue
        if rng.random() < share:
            for gate in (one, two):
                gate.throttled(generation)
                gate.release()
        else:
            one.answered(generation)
            two.succeeded(generation)
            two.release()
        assert _counters(one) == _counters(two)
    assert one.decreases > 0 and one.limit > 1  # halved and grown back on the way
