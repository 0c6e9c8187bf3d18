"""A chain keeps the trial's current state (``assay.util.store()``) on the state each
step hands on, whether a step returns the state it was given or another one."""

from __future__ import annotations

from typing import Any

import anyio

from assay.solver import TaskState, chain
from assay.solver._state import Target, current_state


def _state(text: str) -> TaskState:
    return TaskState(model="m", sample_id=1, epoch=1, input=text, target=Target(text))


def test_each_step_sees_the_state_the_last_one_returned() -> None:
    other = _state("other")
    seen: list[TaskState | None] = []

    async def same(state: TaskState, generate: Any) -> TaskState:
        seen.append(current_state())
        return state

    async def swap(state: TaskState, generate: Any) -> TaskState:
        seen.append(current_state())
        return other

    first = _state("first")

    async def main() -> TaskState:
        return await chain(same, same, swap, same, swap)(first, None)

    assert anyio.run(main) is other
    assert seen == [first, first, first, other, other]
    assert current_state() is None  # nothing left bound after the chain
