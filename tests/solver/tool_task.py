"""A Python task with tools, run by the tool-loop tests through ``eval`` (as a file, so
``assay score`` can rebuild it from the run directory).

The model is the mock provider, scripted by each sample's input (tests/scripted_tools.py:
a JSON list of turns of ``[tool, arguments]`` calls, then ``done: <last tool message>``);
``"forever"`` calls ``add`` on every turn.
"""

from __future__ import annotations

import time
from typing import Any

from assay import Task, ToolError, generate, includes, task, tool, use_tools
from assay.model import (
    ChatMessage,
    GenerateConfig,
    MockAPI,
    ModelOutput,
    ToolCall,
    assistant_message,
    modelapi,
)
from tests.scripted_tools import recording_add, scripted_sample, scripted_turns

CALLS: list[tuple[str, Any]] = []
"""Every tool run, in order: the tests check what ran (and that re-scoring runs none)."""


add = recording_add(CALLS)


@tool
async def divide(x: float, y: float) -> float:
    """Divide x by y."""
    CALLS.append(("divide", (x, y)))
    if y == 0:
        raise ToolError("cannot divide by zero")
    return x / y


@tool
def broken(x: int) -> int:
    """A tool with a bug in it."""
    CALLS.append(("broken", x))
    raise RuntimeError("the tool itself is broken")


@tool
def nap(seconds: float) -> str:
    """Sleep (a sync tool, run in a worker thread)."""
    CALLS.append(("nap", seconds))
    time.sleep(seconds)
    CALLS.append(("rested", seconds))  # a run that waited for the tool would see this
    return "rested"


_TURNS = scripted_turns("mock/tools")


def scripted(messages: list[ChatMessage]) -> ModelOutput:
    """The scripted model (see the module docstring)."""
    prompt = next(m.content for m in messages if m.role == "user")
    if prompt == "forever":
        turn = sum(1 for m in messages if m.role == "assistant")
        call = ToolCall(f"call_{turn}", "add", {"x": turn, "y": 1})
        return ModelOutput("mock/tools", assistant_message("", [call]), "tool_calls")
    return _TURNS(messages)


@modelapi("scripted")
def scripted_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=scripted)


sample = scripted_sample

SAMPLES = [
    sample("sum", [[["add", {"x": 2, "y": 3}]]], "done: 5"),
    sample("two_rounds", [[["add", {"x": 2, "y": 3}]], [["add", {"x": 5, "y": 10}]]], "15"),
    sample("parallel", [[["add", {"x": 1, "y": 1}], ["divide", {"x": 9, "y": 2}]]], "4.5"),
    sample("bad_args", [[["add", {"x": "two", "y": 3}]]], "Expected `int`, got `str`"),
    sample("missing_arg", [[["add", {"x": 2}]]], "missing required field `y`"),
    sample("raw_args", [[["add", {"_raw": "{x: 2"}]]], "not a JSON object"),
    sample("unknown", [[["subtract", {"x": 2, "y": 3}]]], "no tool named 'subtract'"),
    sample("tool_error", [[["divide", {"x": 1, "y": 0}]]], "cannot divide by zero"),
]


@task
def tools_task(
    tool_calls: str = "loop",
    tool_choice: str = "auto",
    message_limit: int | None = None,
    time_limit: float | None = None,
    only: str | None = None,
    with_broken: bool = False,
) -> Task:
    tools = [add, divide, broken] if with_broken else [add, divide]
    dataset = [s for s in SAMPLES if only is None or s.id == only]
    if only == "forever":
        dataset = [sample("forever", "forever", "done")]
    if only == "nap":
        tools, dataset = [nap], [sample("nap", [[["nap", {"seconds": 10}]]], "done")]
    if only == "broken":
        dataset = [sample("broken", [[["broken", {"x": 1}]]], "done")]
    return Task(
        dataset=dataset,
        solver=[use_tools(*tools, tool_choice=tool_choice), generate(tool_calls=tool_calls)],
        scorer=includes(),
        model="scripted/tools",
        message_limit=message_limit,
        time_limit=time_limit,
        fail_on_error=False,
    )
