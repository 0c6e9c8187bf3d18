"""``f1``: token overlap between answer and target, for answers that are nearly right.

Exact match gives "Barack Obama" against "Obama" nothing; token F1 gives partial
credit (0.67), which is how reading-comprehension sets (SQuAD, DROP) are scored.
"""

from __future__ import annotations

from collections import Counter

from assay.score._metric import mean
from assay.score._score import PythonScorer, Score, scorer
from assay.score._stats import stderr
from assay.score._text import normalize, target_values
from assay.solver import Target, TaskState


@scorer(metrics=[mean(), stderr()])
def f1(stop_words: list[str] | None = None) -> PythonScorer:
    """The best token F1 of the answer against any target value, in [0, 1].

    Both sides are normalised as ``exact`` does (case, punctuation, whitespace) and
    split on whitespace; *stop_words* (e.g. articles) are dropped before counting.
    Tokens are counted with multiplicity, as the SQuAD script does.
    """
    dropped = {normalize(w) for w in stop_words or []}

    def tokens(text: str) -> Counter[str]:
        return Counter(t for t in normalize(text).split() if t not in dropped)

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        answer = tokens(completion)
        best = max(token_f1(answer, tokens(v)) for v in target_values(target, "f1"))
        return Score(value=best, answer=completion)

    return score


def token_f1(answer: Counter[str], target: Counter[str]) -> float:
    """F1 of two token bags; two empty bags agree (1.0), one empty bag scores 0.0."""
    if not answer or not target:
        return 1.0 if answer == target else 0.0
    common = sum((answer & target).values())
    if common == 0:
        return 0.0
    precision = common / sum(answer.values())
    recall = common / sum(target.values())
    return 2 * precision * recall / (precision + recall)
