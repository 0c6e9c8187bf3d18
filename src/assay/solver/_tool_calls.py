"""Running the tool calls of a model's answer, each recorded in the trial's evidence.

Each call is two events: ``tool_call`` (the call's id, the function, and its arguments
as a JSON artifact) before the tool runs, and ``tool_result`` (the text the model is
shown, as an artifact, and what kind of ``error`` it was, if any) after. Events the tool
records itself (a model it asks, an ``extra``) are parented to its ``tool_call``.

A call that does not fit (an unknown tool, arguments of the wrong shape) and a tool that
raises ``ToolError`` answer the model with ``Error: ...``: the model may try again.
Any other exception from a tool is recorded (``error: "raised"``) and fails the trial,
like an exception in a solver; so does a limit reached inside a tool.

With approval policies (``Task(approval=...)``, see ``assay.approval``) each call is
decided first, recorded as an ``approval`` event under its ``tool_call``: a rejected
call is not run (the model is told ``Error: Tool call rejected``), a modified one runs
as modified, and ``terminate`` ends the sample (``state.completed``) without running it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from assay._digest import canonical_json
from assay.approval._apply import active, decide
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
    done = state.completed  # a scorer's state is a finished trial's: that ends nothing
    for call in calls:
        check_message_limit(state, message_limit)
        content = await _call(tools, call, state)
        state.messages.append(tool_message(content, call.id))
        if state.completed and not done:  # an approver ended the sample: no more calls
            return


async def _call(tools: dict[str, Tool], call: ToolCall, state: TaskState) -> str:
    """The text answering *call*, with its two events (three, with an approval)."""
    recorder = current_recorder()
    number = _record_call(recorder, call)
    try:
        with _scope(recorder, number):
            run = await _approved(call, state, recorder, tools) if active() else call
            content, error = await _answer(tools, run) if isinstance(run, ToolCall) else run
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


async def _approved(
    call: ToolCall, state: TaskState, recorder: TrialRecorder | None, tools: dict[str, Tool]
) -> ToolCall | tuple[str, str]:
    """The call to run or, when none runs, what the model is told and the error kind."""
    said = next((m for m in reversed(state.messages) if m.role == "assistant"), None)
    message = said.content if said is not None and isinstance(said.content, str) else ""
    tool = tools.get(call.function)
    viewer = tool.viewer if tool is not None else None
    approval, approver = await decide(message, call, list(state.messages), viewer)
    modified = approval.modified if approval.decision == "modify" else None
    if recorder is not None:
        data: dict[str, str | None] = {"id": call.id, "decision": approval.decision}
        data["approver"], data["explanation"] = approver, approval.explanation
        if modified is not None:
            arguments = canonical_json(modified.arguments)
            data["function"] = modified.function
            data["arguments"] = recorder.store.put(arguments, _JSON).sha256
        recorder.record_if_open("approval", data)
    why = f": {approval.explanation}" if approval.explanation else ""
    if approval.decision == "reject":
        return f"Error: Tool call rejected{why}", "rejected"
    if approval.decision == "terminate":
        state.completed = True
        return f"Error: Tool call terminated the sample{why}", "terminated"
    return modified or call


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
