"""The scripted tool-calling model shared by the tool task files (tests/solver/tool_task.py,
tests/tool/sandbox_task.py, tests/approval/approval_task.py): the mock provider's answers,
read off each sample's input. ``calls_turn`` makes one scripted answer (also for the
agent tests' role scripts, tests/agent/agent_task.py), and ``recording_add`` is the
``add`` tool they all offer, each run noted in the task file's list.

The input is a JSON list of turns, each a list of ``[tool, arguments]`` calls. On its
k-th turn the model makes the k-th turn's calls (ids ``call_K_I``); once the script
runs out it answers ``done: <last tool message>``. The task files run from a copy in a
temp folder (so ``assay score`` can rebuild them), and import this from the checkout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assay import Sample, Tool, tool
from assay.model import ChatMessage, ModelOutput, ModelUsage, ToolCall, assistant_message

Script = Callable[[list[ChatMessage]], ModelOutput]


def scripted_turns(model: str) -> Script:
    """The model's answers, as *model* (see the module docstring)."""

    def scripted(messages: list[ChatMessage]) -> ModelOutput:
        prompt = next(m.content for m in messages if m.role == "user")
        turn = sum(1 for m in messages if m.role == "assistant")
        script = json.loads(prompt)
        if turn < len(script):
            return calls_turn(model, script[turn], f"call_{turn}")
        last = messages[-1].content if messages[-1].role == "tool" else ""
        return ModelOutput.from_content(model, f"done: {last}")

    return scripted


def calls_turn(
    model: str, step: list[list[Any]], prefix: str, usage: ModelUsage | None = None
) -> ModelOutput:
    """One scripted answer: the ``[tool, arguments]`` calls of *step*, with ids
    ``<prefix>_<i>``."""
    calls = [ToolCall(f"{prefix}_{i}", name, arguments) for i, (name, arguments) in enumerate(step)]
    return ModelOutput(model, assistant_message("", calls), "tool_calls", usage or ModelUsage())


def scripted_sample(sample_id: str, turns: list[list[list[Any]]] | str, target: str) -> Sample:
    """A sample whose input is the script *turns* (or a word the task file reads itself)."""
    script = turns if isinstance(turns, str) else json.dumps(turns)
    return Sample(input=script, target=target, id=sample_id)


def recording_add(calls: list[tuple[str, Any]]) -> Tool:
    """The ``add`` tool the scripted models call, noting each run in *calls* (the task
    file's ``CALLS``: the tests check what ran, and that re-scoring runs none)."""

    @tool
    def add(x: int, y: int) -> int:
        """Add two integers.

        Args:
            x: the first integer.
            y: the second integer.
        """
        calls.append(("add", (x, y)))
        return x + y

    return add
