"""Python scorers inside the pipeline: Observation in, Verdict out.

The pipeline judges every trial through one interface (``Observation -> Verdict``).
A Python scorer wants ``(TaskState, Target) -> Score``; this adapter rebuilds a
detached TaskState from the output artifact (the final state the evidence holds),
calls the scorer, and maps its value onto a verdict: 1.0 is ``passed``, anything less
``failed``, with the value kept for metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from assay.score._score import PythonScorer, value_to_float
from assay.score._scorers import Observation, Verdict, product_gate
from assay.solver import TaskState

ObservationScorer = Callable[[Observation], Awaitable[Verdict]]


def from_python_scorer(scorer: PythonScorer, score_on_error: bool = False) -> ObservationScorer:
    """Adapt *scorer* to judge observations; errors are scored only with *score_on_error*."""

    async def judge(observation: Observation) -> Verdict:
        if (early := product_gate(observation, score_on_error)) is not None:
            return early
        state = TaskState.from_record(observation.output, observation.expected)
        score = await scorer(state, state.target)
        value = value_to_float(score.value)
        if value >= 1.0:
            return Verdict("passed", value, score.explanation or "", score.answer)
        return Verdict("failed", value, score.explanation or "", score.answer)

    return judge
