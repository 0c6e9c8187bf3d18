"""``pattern``: pull the answer out of the text with a regex, then compare it.

Useful when the model is told to answer in a template ("ANSWER: 42") and the rest of
the text is reasoning: the regex's groups are the answer, the rest is ignored.
"""

from __future__ import annotations

import re

from assay.score._metric import accuracy
from assay.score._score import CORRECT, INCORRECT, PythonScorer, Score, scorer
from assay.score._stats import stderr
from assay.score._text import target_values
from assay.solver import Target, TaskState


@scorer(metrics=[accuracy(), stderr()])
def pattern(pattern: str, ignore_case: bool = True, match_all: bool = False) -> PythonScorer:
    """Correct when the regex's captured groups match the target.

    The first match of *pattern* in the answer is used. Without *match_all*, it is
    correct when any group equals any target value; with *match_all*, every group that
    took part must equal the target. A pattern without groups compares the whole match.
    Groups are compared with surrounding whitespace stripped.
    """
    compiled = re.compile(pattern, re.IGNORECASE if ignore_case else 0)

    def same(found: str, wanted: str) -> bool:
        if ignore_case:
            return found.strip().casefold() == wanted.strip().casefold()
        return found.strip() == wanted.strip()

    async def score(state: TaskState, target: Target) -> Score:
        values = target_values(target, "pattern")
        found = compiled.search(state.output.completion)
        if found is None:
            return Score(value=INCORRECT, explanation=f"pattern {pattern!r} not found")
        groups = [g for g in (found.groups() or (found.group(0),)) if g is not None]
        if match_all:
            hit = bool(groups) and all(same(g, target.text) for g in groups)
            shown = groups
        else:
            shown = [g for g in groups if any(same(g, v) for v in values)]
            hit = bool(shown)
            shown = shown or groups  # a wrong answer is still worth showing
        answer = shown[0].strip() if shown else None
        return Score(value=CORRECT if hit else INCORRECT, answer=answer)

    return score
