"""``choice``: score a multiple-choice answer by the choices the solver marked.

The ``multiple_choice`` solver marks the picked choice ``correct=True`` and may have
shuffled the choices first. A sample's target letters name choices in the dataset's
order, so the scorer maps each marked choice back through ``original_position`` before
comparing: a shuffled run scores exactly as an unshuffled one would.
"""

from __future__ import annotations

import re

from assay.score._metric import accuracy
from assay.score._score import CORRECT, INCORRECT, PythonScorer, Score, scorer
from assay.score._stats import stderr
from assay.solver import Target, TaskState, letters

_LETTER = re.compile(r"[A-Za-z]")


@scorer(metrics=[accuracy(), stderr()])
def choice() -> PythonScorer:
    """Correct when the choices marked correct are exactly the target's letters.

    The target is one letter (``"B"``) or several (``["A", "C"]`` or ``"A,C"``) for
    questions with more than one right answer; picking a subset or a superset is wrong.
    The score's answer is the picked letters in the dataset's order (``"A, C"``).
    """

    async def score(state: TaskState, target: Target) -> Score:
        if not state.choices:
            raise ValueError(
                "choice() scores multiple-choice samples, but the state has no choices; "
                "give the sample choices and solve it with multiple_choice()"
            )
        labels = letters(len(state.choices))
        wanted = {ch.upper() for ch in _LETTER.findall(target.text)}
        if not wanted or not wanted <= set(labels):
            raise ValueError(
                f"choice(): the target {target.text!r} must be letters among "
                f"{', '.join(labels)} (one per correct choice, in the dataset's order)"
            )
        picked = sorted(labels[c.original_position] for c in state.choices if c.correct)
        answer = ", ".join(picked)
        if not picked:
            return Score(value=INCORRECT, answer=answer, explanation="no choice was picked")
        return Score(value=CORRECT if set(picked) == wanted else INCORRECT, answer=answer)

    return score
