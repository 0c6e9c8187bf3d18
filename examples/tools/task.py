"""Tools: a model that answers arithmetic by calling ``multiply`` and ``add``, offline.

    assay run examples/tools/task.py@arithmetic_tools
    assay run examples/tools/task.py@arithmetic_tools --model openai/NAME --model-base-url URL

The ``planner`` provider below is the mock model scripted to use the tools: for
"What is A * B + C?" it calls ``multiply(A, B)``, then ``add`` with the product and C,
then answers with what ``add`` said. A real model given the same tools decides for
itself. Each tool call and its answer is in the run's evidence (``tool_call`` and
``tool_result`` events); see docs/tools.md.
"""

from __future__ import annotations

import re
from typing import Any

from assay import Sample, Task, generate, includes, system_message, task, tool, use_tools
from assay.model import (
    ChatMessage,
    GenerateConfig,
    MockAPI,
    ModelOutput,
    ToolCall,
    assistant_message,
    modelapi,
)


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: the first factor.
        b: the second factor.
    """
    return a * b


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: the first term.
        b: the second term.
    """
    return a + b


def planner(messages: list[ChatMessage]) -> ModelOutput:
    """The scripted model: multiply, then add, then answer (see the module docstring)."""
    question = next(m.content for m in reversed(messages) if m.role == "user")
    a, b, c = (float(x) for x in re.findall(r"\d+", question)[:3])
    results = [m.content for m in messages if m.role == "tool"]
    if not results:
        call = ToolCall("call_1", "multiply", {"a": a, "b": b})
    elif len(results) == 1:
        call = ToolCall("call_2", "add", {"a": float(results[0]), "b": c})
    else:
        return ModelOutput.from_content("planner", f"ANSWER: {float(results[-1]):g}")
    return ModelOutput("planner", assistant_message("", [call]), "tool_calls")


@modelapi("planner")
def planner_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    """``planner/<anything>``: the mock provider answering with ``planner``."""
    return MockAPI(name, config, outputs=planner)


@task
def arithmetic_tools(count: int = 5) -> Task:
    samples = [
        Sample(
            input=f"What is {i + 11} * {i + 3} + {i * 7}?", target=f"{(i + 11) * (i + 3) + i * 7}"
        )
        for i in range(count)
    ]
    return Task(
        dataset=samples,
        solver=[
            system_message("Use the tools for every step. End with 'ANSWER: <number>'."),
            use_tools(multiply, add),
            generate(),
        ],
        scorer=includes(),
        model="planner/v1",
        message_limit=12,
    )
