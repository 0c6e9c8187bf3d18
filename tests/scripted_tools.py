"""The scripted tool-calling model shared by the tool task files (tests/solver/tool_task.py,
tests/tool/sandbox_task.py): the mock provider's answers, read off each sample's input.

The input is a JSON list of turns, each a list of ``[tool, arguments]`` calls. On its
k-th turn the model makes the k-th turn's calls (ids ``call_K_I``); once the script
runs out it answers ``done: <last tool message>``. The task files run from a copy in a
temp folder (so ``assay score`` can rebuild them), and import this from the checkout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assay import Sample
from assay.model import ChatMessage, ModelOutput, ToolCall, assistant_message

Script = Callable[[list[ChatMessage]], ModelOutput]


def scripted_turns(model: str) -> Script:
    """The model's answers, as *model* (see the module docstring)."""

    def scripted(messages: list[ChatMessage]) -> ModelOutput:
        prompt = next(m.content for m in messages if m.role == "user")
        turn = sum(1 for m in messages if m.role == "assistant")
        script = json.loads(prompt)
        if turn < len(script):
            calls = [
                ToolCall(f"call_{turn}_{i}", name, arguments)
                for i, (name, arguments) in enumerate(script[turn])
            ]
            return ModelOutput(model, assistant_message("", calls), "tool_calls")
        last = messages[-1].content if messages[-1].role == "tool" else ""
        return ModelOutput.from_content(model, f"done: {last}")

    return scripted


def scripted_sample(sample_id: str, turns: list[list[list[Any]]] | str, target: str) -> Sample:
    """A sample whose input is the script *turns* (or a word the task file reads itself)."""
    script = turns if isinstance(turns, str) else json.dumps(turns)
    return Sample(input=script, target=target, id=sample_id)
