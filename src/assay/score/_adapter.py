"""Python scorers inside the pipeline: Observation in, Verdict out.

The pipeline judges every trial through one interface (``Observation -> Verdict``).
A Python scorer wants ``(TaskState, Target) -> Score``; this adapter rebuilds a
detached TaskState from the output artifact (the final state the evidence holds),
calls the scorer, and maps its value onto a verdict: 1.0 is ``passed``, anything less
``failed``, with the value kept for metrics. A scorer that returns something other than
a ``Score``, or a value no metric can read, raises here: the pipeline records an
``error`` score naming the exception (see ``score_observation``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from assay._registry import json_safe
from assay.score._score import (
    InvalidScoreValue,
    PythonScorer,
    Score,
    _to_float,
    answer_judge,
    value_to_float,
)
from assay.score._scorers import Observation, ScoreStatus, Verdict, product_gate
from assay.score._text import target_values
from assay.solver import Target
from assay.solver._state import completion_from_json, state_from_json, state_scope

ObservationScorer = Callable[[Observation], Awaitable[Verdict]]
_encode = msgspec.json.Encoder().encode


def from_python_scorer(scorer: PythonScorer, score_on_error: bool = False) -> ObservationScorer:
    """Adapt *scorer* to judge observations; errors are scored only with *score_on_error*."""
    return _Adapted(scorer, score_on_error)


def keyed_values(value: object) -> dict[str, float] | None:
    """A dict value's entries (a list's by position: ``"0"``, ``"1"``...) each mapped by
    ``value_to_float``; ``None`` for a scalar. An empty one, or one holding something
    no metric can read, is refused (``InvalidScoreValue``), never a silent 0."""
    if isinstance(value, list | tuple):
        value = {str(index): item for index, item in enumerate(value)}
    if not isinstance(value, dict):
        return None
    if not value:
        raise InvalidScoreValue(value)
    return {str(key): value_to_float(item) for key, item in value.items()}


class _Adapted:
    """A Python scorer seen as an observation scorer; ``aclose`` reaches the scorer's
    own (a model-graded scorer closes the graders it built when the run ends).

    A built-in scorer that reads only the answer text (``answer_judge``: decided once,
    here) may also be judged by ``verdict_of_answer`` from the output's bytes, without
    the state, its scope and the generic layers: the judge's common case."""

    __slots__ = ("answer_of", "score_on_error", "scorer")

    reads_raw = True  # it decodes the output's bytes into its TaskState (READS_RAW)

    def __init__(self, scorer: PythonScorer, score_on_error: bool) -> None:
        self.scorer = scorer
        self.score_on_error = score_on_error
        self.answer_of = answer_judge(scorer)

    async def __call__(self, observation: Observation) -> Verdict:
        if (early := product_gate(observation, self.score_on_error)) is not None:
            return early
        # Each scorer gets its own copy: one scorer's edits never reach another's view.
        data = observation.raw if observation.raw is not None else _encode(observation.output)
        state = state_from_json(data, observation.expected)
        with state_scope(state):  # assay.util.store() is this trial's, as in a solver
            score = await self.scorer(state, state.target)
        return _verdict(score)

    def verdict_of_answer(
        self, data: bytes, expected: Any, completion: str | None = None
    ) -> Verdict | None:
        """``__call__``'s verdict on an answered trial whose output is *data* (JSON), for
        a scorer judged from the answer text alone; ``None`` when it is not one, the
        bytes are no state record or it raises: ``__call__`` then judges (and reports)
        it, so every verdict made here is the one it would give. *completion*: the
        answer text *data* holds, when the caller knows it (``answer_in_json``)."""
        if self.answer_of is None:
            return None
        if completion is None:
            completion = completion_from_json(data)
        if completion is None:
            return None
        # target_values(Target(expected)) of a text target, the common case, made here
        values = [expected] if type(expected) is str and expected.strip() else None
        try:
            if values is None:  # a list, a number, none or blank (a scorer error)
                values = target_values(Target(expected), "")
            correct, answer, explanation = self.answer_of(completion, values)
        except Exception:  # the general path records the error the same way as ever
            return None
        # _verdict of the Score answer_scorer makes: C passes at 1.0, I fails at 0.0
        if correct:
            return Verdict("passed", 1.0, explanation or "", answer)
        return Verdict("failed", 0.0, explanation or "", answer)

    async def aclose(self) -> None:
        """Let the scorer release what it holds, if it can (``aclose``, optional)."""
        closer = getattr(self.scorer, "aclose", None)
        if closer is not None:
            await closer()


def _verdict(score: object) -> Verdict:
    """A Python scorer's Score as the pipeline's verdict: 1.0 passes, a dict or list
    value is measured key by key; anything else than a Score is refused."""
    if not isinstance(score, Score):
        raise TypeError(f"the scorer returned {type(score).__name__}, not a Score")
    given = score.value  # a scalar, the common case, goes straight to its conversion
    values = keyed_values(given) if isinstance(given, dict | list | tuple) else None
    if values is None:
        value = _to_float(given)  # value_to_float's work, without its no-argument form
        passed = value >= 1.0
    else:
        value = math.fsum(values.values()) / len(values)
        passed = all(v >= 1.0 for v in values.values())
    status: ScoreStatus = "passed" if passed else "failed"
    metadata = json_safe(score.metadata) if score.metadata is not None else None
    return Verdict(status, value, score.explanation or "", score.answer, metadata, values)
