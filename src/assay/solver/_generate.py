"""The model call behind ``generate``: ask, and while the answer calls tools, run them
and ask again.

``tool_calls`` says how far to go: ``"loop"`` (the default) until the model answers
without calling a tool, ``"single"`` one round of calls and back to the solver,
``"none"`` not at all (the calls stay in the answer for the solver to read). A limit
(messages, tokens, cost, time) ends the loop like any other call: the trial keeps the
state it reached, tool messages and all, and is scored on it.

A ``tool_choice`` naming one tool (or ``"any"``) forces a tool call on the first call
only; the calls after it are ``"auto"``, or a forced tool would be called for ever.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from assay.errors import ConfigError
from assay.model import GenerateConfig, Model
from assay.solver._state import TaskState
from assay.solver._tool_calls import call_tools, check_message_limit

ToolCalls = Literal["loop", "single", "none"]
"""How ``generate`` handles the tool calls of an answer (see the module docstring)."""

TOOL_CALLS: tuple[str, ...] = get_args(ToolCalls)


def check_tool_calls(value: Any) -> None:
    """A ConfigError unless *value* is ``"loop"``, ``"single"`` or ``"none"``."""
    if value not in TOOL_CALLS:
        raise ConfigError("tool.bad_tool_calls", value=value)


async def generate_loop(
    state: TaskState,
    model: Model,
    config: GenerateConfig | None = None,
    tool_calls: ToolCalls = "loop",
    message_limit: int | None = None,
) -> TaskState:
    """Ask *model* about ``state.messages`` with the state's tools, run the tools it
    calls (see the module docstring), and return the state with every message appended
    and ``state.output`` the last answer."""
    if tool_calls != "loop":  # the default needs no check (every model call comes here)
        check_tool_calls(tool_calls)
    choice = state.tool_choice
    while True:
        check_message_limit(state, message_limit)
        tools = [t.schema for t in state.tools] if state.tools else None
        call_config = config
        if tools is not None:
            call_config = (config or GenerateConfig()).merge(GenerateConfig(tool_choice=choice))
        output = await model.generate(state.messages, tools=tools, config=call_config)
        state.output = output
        state.messages.append(output.message)
        calls = output.message.tool_calls
        if not calls or tools is None or tool_calls == "none" or choice == "none":
            return state
        await call_tools(state, calls, message_limit)
        if tool_calls == "single" or state.completed:  # completed: an approver ended it
            return state
        choice = "auto"
