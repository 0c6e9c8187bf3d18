"""``match``, ``includes`` and ``exact``: the answer text against the target text.

Names and defaults follow Inspect AI's scorers of the same names, so a task written for
one reads the same here. Each target value is tried in turn and the first that fits
decides; the score's ``answer`` is what was compared (the number read, for ``numeric``).
"""

from __future__ import annotations

from typing import Literal

from assay.score._metric import accuracy
from assay.score._score import Answered, PythonScorer, answer_scorer, scorer
from assay.score._stats import stderr
from assay.score._text import (
    STRIPPED,
    find_numbers,
    normalize,
    parse_number,
    same_number,
)

Location = Literal["begin", "end", "any", "exact"]
_LOCATIONS = ("begin", "end", "any", "exact")


@scorer(metrics=[accuracy(), stderr()])
def match(
    location: Location = "end", *, ignore_case: bool = True, numeric: bool = False
) -> PythonScorer:
    """Correct when the target appears at *location* in the answer.

    Answers usually end with the result ("... so the answer is 42"), hence ``end`` by
    default. Surrounding whitespace and punctuation are ignored. With *numeric*, a
    numeric target is compared as a number with the first (``begin``), last (``end``)
    or any (``any``) number in the answer, or with the whole answer (``exact``), so
    ``"$1,200.00"`` matches a target of ``1200``.
    """
    if location not in _LOCATIONS:
        raise ValueError(f"match(location={location!r}): use one of {', '.join(_LOCATIONS)}")

    def judge_answer(completion: str, values: list[str]) -> Answered:
        answer: str | None = completion
        for value in values:
            number = parse_number(value) if numeric else None
            if number is not None:
                answer, matched = _match_number(completion, number, location)
            else:
                matched = _match_text(completion, value, location, ignore_case)
            if matched:
                return True, answer, None
        return False, answer, "no number found in the answer" if answer is None else None

    return answer_scorer(judge_answer, "match")


def _match_text(completion: str, value: str, location: Location, ignore_case: bool) -> bool:
    answer, wanted = completion.strip(STRIPPED), value.strip(STRIPPED)  # "Paris." is Paris
    if ignore_case:
        answer, wanted = answer.casefold(), wanted.casefold()
    if location == "begin":
        return answer.startswith(wanted)
    if location == "end":
        return answer.endswith(wanted)
    if location == "exact":
        return answer == wanted
    return wanted in answer


def _match_number(completion: str, wanted: float, location: Location) -> tuple[str | None, bool]:
    """The number read from *completion* at *location*, and whether it equals *wanted*."""
    if location == "exact":
        found = parse_number(completion)
        return completion.strip(), found is not None and same_number(found, wanted)
    written = find_numbers(completion)
    if not written:
        return None, False
    if location == "any":
        hits = [w for w in written if same_number(_number(w), wanted)]
        return (hits[0], True) if hits else (written[-1], False)
    picked = written[0] if location == "begin" else written[-1]
    return picked, same_number(_number(picked), wanted)


def _number(written: str) -> float:
    value = parse_number(written)
    assert value is not None, written  # find_numbers only finds parseable numbers
    return value


@scorer(metrics=[accuracy(), stderr()])
def includes(ignore_case: bool = True) -> PythonScorer:
    """Correct when a target value occurs anywhere in the answer.

    The loosest text check: good for short factual targets ("Paris") in free-form
    answers, and the reason an empty target is refused rather than always passing.
    """

    def judge_answer(completion: str, values: list[str]) -> Answered:
        haystack = completion.casefold() if ignore_case else completion
        for value in values:
            needle = value.casefold() if ignore_case else value
            if needle in haystack:
                return True, completion, None
        return False, completion, None

    return answer_scorer(judge_answer, "includes")


@scorer(metrics=[accuracy(), stderr()])
def exact() -> PythonScorer:
    """Correct when the answer equals a target after normalisation.

    Normalisation folds case, drops punctuation and collapses whitespace (as the SQuAD
    exact-match metric does, but keeping articles), so ``"The  Eiffel Tower."`` equals
    ``"the eiffel tower"`` while any extra word makes the answer wrong.
    """

    def judge_answer(completion: str, values: list[str]) -> Answered:
        answer = normalize(completion)
        hit = any(answer == normalize(v) for v in values)
        return hit, completion, None

    return answer_scorer(judge_answer, "exact")
