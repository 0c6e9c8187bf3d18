"""TaskState builders for the scorer tests: a final state as the evidence would hold it."""

from __future__ import annotations

from typing import Any

import anyio

from assay.model import ModelOutput
from assay.score import PythonScorer, Score
from assay.solver import Target, TaskState


def make_state(
    completion: str,
    target: Any = "A",
    *,
    choices: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    input: str = "q",
) -> TaskState:
    state = TaskState(
        model="mock/x",
        sample_id=1,
        epoch=1,
        input=input,
        target=Target(target),
        choices=choices,
        metadata=metadata,
    )
    state.output = ModelOutput.from_content("mock/x", completion)
    return state


def judge(scorer: PythonScorer, state: TaskState) -> Score:
    """Score *state* as the pipeline does: on a copy rebuilt from its evidence record."""
    rebuilt = TaskState.from_record(state.to_record(), state.target.raw)
    return anyio.run(scorer, rebuilt, rebuilt.target)


def value(scorer: PythonScorer, completion: str, target: Any = "A") -> Any:
    """The score value of *completion* against *target*."""
    return judge(scorer, make_state(completion, target)).value
