"""Arithmetic: a Python task with epochs and two scorers, runnable offline.

    assay run examples/arithmetic/tasks.py@arithmetic

The ``calculator`` provider registered below is the built-in mock model with a brain:
it computes the answer, but gets every seventh question wrong on purpose, so the scores
are not all perfect. (It also shows how a provider plugs in: ``@modelapi("name")``.)
"""

from __future__ import annotations

import re
from typing import Any

from assay import Epochs, Sample, Task, chain_of_thought, generate, includes, match, task
from assay.model import ChatMessage, GenerateConfig, MockAPI, modelapi


def calculator(messages: list[ChatMessage]) -> str:
    """The mock model's brain: answer "a op b" questions (wrong when a is a multiple of 7)."""
    found = re.search(r"(\d+) ([+*-]) (\d+)", messages[-1].content)
    if found is None:
        return "ANSWER: unknown"
    a, op, b = found.groups()
    value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op]
    if int(a) % 7 == 0:
        value += 1  # a deliberate mistake
    return f"Let me work it out.\nANSWER: {value}"


@modelapi("calculator")
def calculator_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    """``calculator/<anything>``: the mock provider answering with ``calculator``."""
    return MockAPI(name, config, outputs=calculator)


def questions(count: int) -> list[Sample]:
    samples = []
    for i in range(1, count + 1):
        a, b, op = i * 3, i + 2, "+-*"[i % 3]
        answer = {"+": a + b, "-": a - b, "*": a * b}[op]
        samples.append(Sample(input=f"What is {a} {op} {b}?", target=str(answer), id=f"q{i}"))
    return samples


@task
def arithmetic(count: int = 20, epochs: int = 3) -> Task:
    """Small sums, asked with chain of thought, scored two ways."""
    return Task(
        dataset=questions(count),
        solver=[chain_of_thought(), generate()],
        scorer=[match(numeric=True), includes()],
        epochs=Epochs(epochs, "mean"),
        model="calculator/v1",
    )
