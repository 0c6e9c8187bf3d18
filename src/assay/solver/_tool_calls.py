"""Running the tool calls of a model's answer, each recorded in the trial's evidence.

Each call is two events: ``tool_call`` (the call's id, the function, and its arguments
as a JSON artifact) before the tool runs, and ``tool_result`` (the text the model is
shown, as an artifact, and what kind of ``error`` it was, if any) after. Events the tool
records itself (a model it asks, an ``extra``) are parented to its ``tool_call``.

A call that does not fit (an unknown tool, arguments of the wrong shape) and a tool that
raises ``ToolError`` answer the model with ``Error: ...``: the model may try again.
Any other exception from a tool is recorded (``error: "raised"``) and fails the trial,
like an exception in a solver; so does a limit reached inside a tool.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from assay._digest import canonical_json
from assay.evidence import TrialRecorder, current_recorder
from assay.model import LimitExceeded, ToolCall, tool_message
from assay.solver._state import TaskState
from assay.solver._tools import Tool, ToolCallError, ToolError

_JSON = "application/json"
_TEXT = "text/plain; charset=utf-8"


def check_message_limit(state: TaskState, message_limit: int | None) -> None:
    """Stop the trial once the conversation holds *message_limit* messages."""
    if message_limit is not None and len(state.messages) >= message_limit:
        raise LimitExceeded("message", len(state.messages), message_limit)


async def call_tools(
    state: TaskState, calls: list[ToolCall], message_limit: int | None = None
) -> None:
    """Run *calls* one after another, in the order the model gave them, appending a tool
    message answering each to ``state.messages``."""
    tools = {t.name: t for t in state.tools}
    for call in calls:
        check_message_limit(state, message_limit)
        content = await _call(tools, call)
        state.messages.append(tool_message(content, call.id))


async def _call(tools: dict[str, Tool], call: ToolCall) -> str:
    """The text answering *call*, with its two events."""
    recorder = current_recorder()
    number = _record_call(recorder, call)
    try:
        with _scope(recorder, number):
            content, error = await _answer(tools, call)
    except LimitExceeded as exc:
        _record_result(recorder, call, None, "limit", str(exc))
        raise
    except Exception as exc:
        _record_result(recorder, call, None, "raised", f"{type(exc).__name__}: {exc}")
        raise
    _record_result(recorder, call, content, error)
    return content


async def _answer(tools: dict[str, Tool], call: ToolCall) -> tuple[str, str | None]:
    """What the tool says (or what the model is told went wrong), and the error kind."""
    tool = tools.get(call.function)
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        return f"Error: there is no tool named {call.function!r} (tools: {names})", "unknown_tool"
    try:
        return await tool.execute(call.arguments), None
    except ToolCallError as exc:
        return f"Error: {exc}", "arguments"
    except ToolError as exc:
        return f"Error: {exc}", "tool_error"


def _record_call(recorder: TrialRecorder | None, call: ToolCall) -> int | None:
    if recorder is None:
        return None
    arguments = recorder.store.put(canonical_json(call.arguments), _JSON).sha256
    data = {"id": call.id, "function": call.function, "arguments": arguments}
    return recorder.record_if_open("tool_call", data)


def _record_result(
    recorder: TrialRecorder | None,
    call: ToolCall,
    content: str | None,
    error: str | None,
    detail: str | None = None,
) -> None:
    if recorder is None:
        return
    result = None if content is None else recorder.store.put(content.encode(), _TEXT).sha256
    data = {"id": call.id, "function": call.function, "result": result, "error": error}
    if detail is not None:
        data["detail"] = detail
    recorder.record_if_open("tool_result", data)


@contextlib.contextmanager
def _scope(recorder: TrialRecorder | None, number: int | None) -> Iterator[None]:
    """Parent the events recorded inside the block to event *number*, if there is one."""
    if recorder is None or number is None:
        yield
        return
    with recorder.scope(number):
        yield
