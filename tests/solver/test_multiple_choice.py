"""``parse_answer``: the letter a model picked, read strictly, then loosely."""

from __future__ import annotations

import pytest

from assay.solver import parse_answer


@pytest.mark.parametrize(
    ("completion", "picked"),
    [
        ("Reasoning...\nANSWER: C", "C"),
        ("ANSWER: A\nno wait, ANSWER: (d)", "D"),
        ("The answer is D) pinna", "D"),
        ("The answer is: C) Usually occur", "C"),
        ("Answer: (B)", "B"),
        ("A) Supermarkets.", "A"),
        ("B", "B"),
        (" (C) ", "C"),
        ("A) I only\nB) II only\nC) I and II only\nD) I, II, and III", None),  # all of them
        ("the answer is a good one", None),  # a lower-case word is not a letter
        ("I. first\nII. second", None),  # not one of the choices
        ("E", None),
        ("I am not sure.", None),
    ],
)
def test_the_answer_letter_is_read_strictly_then_loosely(
    completion: str, picked: str | None
) -> None:
    assert parse_answer(completion, ["A", "B", "C", "D"]) == picked
