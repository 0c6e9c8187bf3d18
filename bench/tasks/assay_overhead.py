"""The overhead workload as an assay Python task: ``generate()`` then ``match()``.

The model (``bench-echo/…``, the built-in mock model with a function) answers at once
with the question itself, so every sample passes and the run measures assay alone.
``bench/tasks/inspect_overhead.py`` is the same workload for Inspect AI.

    assay run bench/tasks/assay_overhead.py@overhead -T samples=1000
"""

from __future__ import annotations

from typing import Any

from assay import Sample, Task, generate, match, task
from assay.model import ChatMessage, GenerateConfig, MockAPI, modelapi


def echo(messages: list[ChatMessage]) -> str:
    """Answer with the question (the target): no tokenizer, no network, no wait."""
    return messages[-1].content


@modelapi("bench-echo")
def echo_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    """``bench-echo/<anything>``: the mock model answering with ``echo``."""
    return MockAPI(name, config, outputs=echo)


def questions(count: int) -> list[Sample]:
    return [
        Sample(input=f"question {i}", target=f"question {i}", id=f"s{i:07d}") for i in range(count)
    ]


@task
def overhead(samples: int = 1000) -> Task:
    """N questions, each answered by its own text and scored by ``match()``."""
    return Task(
        dataset=questions(samples), solver=[generate()], scorer=match(), model="bench-echo/v1"
    )
