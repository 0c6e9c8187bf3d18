"""``answer`` and ``multi_scorer``: two of Inspect's scorers, under their Inspect names.

``answer`` reads the answer a prompt asked for in the form ``ANSWER: ...`` (a letter, a
word or the rest of the line); ``multi_scorer`` asks several scorers (several graders,
say) and folds their scores into one with an epoch reducer's rule, so a panel of
judges is one score with one verdict in the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from assay.score._metric import accuracy
from assay.score._reducers import ScoreReducer, get_reducer
from assay.score._score import CORRECT, INCORRECT, PythonScorer, Score, scorer, value_to_float
from assay.score._stats import stderr
from assay.score._text import target_values
from assay.solver import Target, TaskState

_ANSWER = {
    "letter": re.compile(r"ANSWER\s*:\s*([A-Za-z])\b"),
    "word": re.compile(r"ANSWER\s*:\s*(\w+)"),
    "line": re.compile(r"ANSWER\s*:\s*([^\n]*)"),
}


@scorer(metrics=[accuracy(), stderr()])
def answer(pattern: Literal["letter", "word", "line"]) -> PythonScorer:
    """Correct when what follows the last ``ANSWER:`` equals a target value (ignoring
    case and surrounding spaces): its first letter, word, or the rest of its line."""
    if pattern not in _ANSWER:
        raise ValueError(f"answer(pattern={pattern!r}): use 'letter', 'word' or 'line'")
    compiled = _ANSWER[pattern]

    async def score(state: TaskState, target: Target) -> Score:
        values = target_values(target, "answer")
        found = compiled.findall(state.output.completion)
        if not found:
            return Score(value=INCORRECT, explanation="no 'ANSWER:' in the output")
        given = found[-1].strip()
        hit = any(given.casefold() == v.strip().casefold() for v in values)
        return Score(value=CORRECT if hit else INCORRECT, answer=given)

    return score


@scorer(metrics=[accuracy(), stderr()])
def multi_scorer(scorers: Sequence[PythonScorer], reducer: str | ScoreReducer) -> PythonScorer:
    """One score from several scorers, as Inspect's ``multi_scorer``.

    *reducer* is an epoch reducer's name (``"mode"`` for a majority vote, ``"mean"``,
    ``"max"``, ``"at_least_2"``, a ``@score_reducer``'s) applied to the scores' values,
    or a ``list[Score] -> Score`` function. The explanation lists every scorer's.
    """
    if not scorers:
        raise ValueError("multi_scorer needs at least one scorer")
    by_name = get_reducer(reducer) if isinstance(reducer, str) else None

    async def score(state: TaskState, target: Target) -> Score:
        scores = [await one(state, target) for one in scorers]
        if by_name is not None:
            folded = Score(value=by_name([value_to_float(s.value) for s in scores]))
        else:
            folded = reducer(scores)  # type: ignore[operator]
        explained = "\n".join(
            f"{index}: {s.value} {s.explanation or ''}".rstrip()
            for index, s in enumerate(scores, 1)
        )
        return Score(
            value=folded.value,
            answer=folded.answer if folded.answer is not None else scores[0].answer,
            explanation=folded.explanation or explained,
            metadata=folded.metadata,
        )

    return score
