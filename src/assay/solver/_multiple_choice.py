"""``multiple_choice``: letter the choices (optionally shuffled), ask, read the letter back.

Shuffling is seeded by the sample id and epoch, so it is the same on every run of the
same spec; the order used is recorded in ``state.metadata["choice_order"]`` (and so in
the evidence), and each choice keeps its original position for the scorer.
"""

from __future__ import annotations

import random
import re

from assay.solver._solver import Generate, Solver, solver
from assay.solver._state import TaskState

MULTIPLE_CHOICE = """Answer the following multiple choice question. The entire content of \
your response should be of the following format: 'ANSWER: $LETTER' (without quotes) where \
LETTER is one of {letters}.

{question}

{choices}"""

_ANSWER = re.compile(r"ANSWER\s*:\s*\(?([A-Za-z])\)?")


def letters(count: int) -> list[str]:
    """``A``, ``B``, ... for *count* choices."""
    return [chr(ord("A") + i) for i in range(count)]


@solver
def multiple_choice(
    template: str = MULTIPLE_CHOICE, shuffle: bool = False, seed: int = 0
) -> Solver:
    """Ask a lettered multiple-choice question and mark the choice the model picked."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if shuffle:
            rng = random.Random(f"{seed}:{state.sample_id}:{state.epoch}")
            rng.shuffle(state.choices)
            state.metadata["choice_order"] = [c.original_position for c in state.choices]
        labels = letters(len(state.choices))
        lines = "\n".join(
            f"{label}) {c.value}" for label, c in zip(labels, state.choices, strict=True)
        )
        state.user_prompt.content = template.format(
            question=state.input_text, choices=lines, letters=",".join(labels)
        )
        state = await generate(state)
        picked = parse_answer(state.output.completion)
        for label, choice in zip(labels, state.choices, strict=True):
            choice.correct = label == picked
        return state

    return solve


def parse_answer(completion: str) -> str | None:
    """The letter after the last ``ANSWER:`` in *completion*, upper-cased."""
    found = _ANSWER.findall(completion)
    return found[-1].upper() if found else None
