"""``multiple_choice``: letter the choices (optionally shuffled), ask, read the letter back.

Shuffling is seeded by the sample id and epoch, so it is the same on every run of the
same spec; the order used is recorded in ``state.metadata["choice_order"]`` (and so in
the evidence), and each choice keeps its original position for the scorer.
"""

from __future__ import annotations

import random
import re

from assay._registry import recorded_when_given
from assay.solver._builtin import fill_template
from assay.solver._solver import Generate, Solver, solver
from assay.solver._state import TaskState

MULTIPLE_CHOICE = """Answer the following multiple choice question. The entire content of \
your response should be of the following format: 'ANSWER: $LETTER' (without quotes) where \
LETTER is one of {letters}.

{question}

{choices}"""

MULTIPLE_CHOICE_COT = """Answer the following multiple choice question. The last line of your \
response should be of the following format: 'ANSWER: $LETTER' (without quotes) where LETTER \
is one of {letters}. Think step by step before answering.

{question}

{choices}"""

MULTIPLE_ANSWER = """Answer the following multiple choice question where multiple answers \
may be correct. The entire content of your response should be of the following format: \
'ANSWER: $LETTERS' (without quotes) where LETTERS is one or more of {letters}.

{question}

{choices}"""

MULTIPLE_ANSWER_COT = """Answer the following multiple choice question where multiple \
answers may be correct. The last line of your response should be of the following format: \
'ANSWER: $LETTERS' (without quotes) where LETTERS is one or more of {letters}. Think step \
by step before answering.

{question}

{choices}"""

_TEMPLATES = {
    (False, False): MULTIPLE_CHOICE,
    (True, False): MULTIPLE_CHOICE_COT,
    (False, True): MULTIPLE_ANSWER,
    (True, True): MULTIPLE_ANSWER_COT,
}

_ANSWERS = re.compile(r"ANSWER\s*:\s*([A-Za-z](?:[\s,]+[A-Za-z]\b)*)")
_ANSWER = re.compile(r"ANSWER\s*:\s*\(?([A-Za-z])\)?")
# For models that ignore the format (small local ones do): "the answer is B", "Answer: (B)",
# a line starting with a capital choice letter ("B) pinna", "(B)", "B."), or just "B".
_LOOSE = (
    re.compile(r"(?i:\banswer)(?:\s+is)?\s*:?\s*\(?([A-Z])\b"),
    re.compile(r"^\s*\(?([A-Z])[).:]", re.MULTILINE),
    re.compile(r"\A\s*\(?([A-Z])\)?\.?\s*\Z"),  # just the letter
)


def letters(count: int) -> list[str]:
    """``A``, ``B``, ... for *count* choices."""
    return [chr(ord("A") + i) for i in range(count)]


@solver
@recorded_when_given("cot", "multiple_correct")
def multiple_choice(
    template: str | None = MULTIPLE_CHOICE,
    shuffle: bool = False,
    seed: int = 0,
    *,
    cot: bool = False,
    multiple_correct: bool = False,
) -> Solver:
    """Ask a lettered multiple-choice question and mark the choice the model picked.

    As Inspect's: *cot* asks the model to think step by step before its last line's
    ``ANSWER:``; with *multiple_correct* it may name several letters (``ANSWER: A, C``),
    each marked correct. Without a *template* (or with the default one), the one those two
    choose.
    """
    prompt = template
    if prompt is None or prompt == MULTIPLE_CHOICE:
        prompt = _TEMPLATES[(cot, multiple_correct)]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if shuffle:
            rng = random.Random(f"{seed}:{state.sample_id}:{state.epoch}")
            rng.shuffle(state.choices)
            state.metadata["choice_order"] = [c.original_position for c in state.choices]
        labels = letters(len(state.choices))
        lines = "\n".join(
            f"{label}) {c.value}" for label, c in zip(labels, state.choices, strict=True)
        )
        fields = {"question": state.input_text, "choices": lines, "letters": ",".join(labels)}
        state.user_prompt.text = fill_template(prompt, fields)
        state = await generate(state)
        completion = state.output.completion
        picked = (
            parse_answers(completion) if multiple_correct else {parse_answer(completion, labels)}
        )
        for label, choice in zip(labels, state.choices, strict=True):
            choice.correct = label in picked
        return state

    return solve


def parse_answers(completion: str) -> set[str]:
    """The letters after the last ``ANSWER:`` in *completion* (``A, C`` or ``A C``)."""
    found: list[str] = _ANSWERS.findall(completion)
    return {ch.upper() for ch in re.findall(r"[A-Za-z]", found[-1])} if found else set()


def parse_answer(completion: str, labels: list[str] | None = None) -> str | None:
    """The letter after the last ``ANSWER:`` in *completion*, upper-cased.

    Without an ``ANSWER:``, a looser reading: ``the answer is B`` or a line starting
    with ``B)``, ``(B)`` or ``B.``, counted only if exactly one of the *labels* is named
    that way. A model that lists every choice back names four, so it picks none.
    """
    found: list[str] = _ANSWER.findall(completion)
    if found:
        return found[-1].upper()
    named: set[str] = {letter for pattern in _LOOSE for letter in pattern.findall(completion)}
    if labels is not None:
        named &= set(labels)
    return named.pop() if len(named) == 1 else None
