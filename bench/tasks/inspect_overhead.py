"""The overhead workload for Inspect AI: ``generate()`` then ``match()``, as in assay's.

Runs in ``bench/.venv-inspect`` (Inspect's own environment). The model is Inspect's
``mockllm`` with a custom outputs function that answers with the question and gives
each reply its own token usage: left without usage, mockllm counts tokens with a
tokenizer it downloads, which fails offline.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate


def echo(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """Answer with the question, with usage counted as words (no tokenizer)."""
    text = input[-1].text
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    words_in = sum(len(message.text.split()) for message in input)
    words_out = len(text.split())
    output.usage = ModelUsage(
        input_tokens=words_in, output_tokens=words_out, total_tokens=words_in + words_out
    )
    return output


def questions(count: int) -> MemoryDataset:
    return MemoryDataset(
        [
            Sample(input=f"question {i}", target=f"question {i}", id=f"s{i:07d}")
            for i in range(count)
        ]
    )


@task
def overhead(samples: int = 1000) -> Task:
    """N questions, each answered by its own text and scored by ``match()``."""
    return Task(
        dataset=questions(samples),
        solver=[generate()],
        scorer=match(),
        model=get_model("mockllm/model", custom_outputs=echo),
    )


@task
def network(samples: int = 1000) -> Task:
    """The same questions for a real model (``--model openai/…`` against bench/server.py)."""
    return Task(dataset=questions(samples), solver=[generate()], scorer=match())
