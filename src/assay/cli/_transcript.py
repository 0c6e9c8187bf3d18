"""An agent's transcript, turn by turn, for ``assay show RUN --trial ID``.

Built from the trial's checked evidence: the final state (its conversation, and the
conversations of sub-agents it handed work to, kept in ``store["handoffs"]``) and the
trial's events (``tool_result`` says whether a call failed and how; ``agent_submission``
says which answer was submitted on which attempt and what the scorer made of it;
``sandbox_exec`` events under a ``tool_call`` are the commands that call ran, an
``approval`` event under it what the task's approval policies decided). A turn is one
model answer: what the assistant said, each tool call with its arguments, each result
with the approver's decision before it and the sandbox commands it ran, and the
submission it made, if any.
Messages between turns (the continue and incorrect-answer messages) are shown where
they were said.

Every text is passed through the show command's ``text`` function: control and
bidirectional characters escaped, and each item cut at the show limit unless ``--full``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.model._content import shown_content

Text = Callable[[Any], str]
"""*value* as one safe, capped block of text (see ``_show._text``)."""

INDENT = "    "


class Evidence:
    """What the transcript reads from the events: results' errors, submissions."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.errors: dict[tuple[str, str], list[str | None]] = {}
        self.submissions: dict[str, list[dict[str, Any]]] = {}
        self.calls: dict[tuple[str, str], list[Any]] = {}  # each call's event number
        self.execs: dict[Any, list[dict[str, Any]]] = {}  # sandbox commands by parent
        self.approvals: dict[Any, list[dict[str, Any]]] = {}  # decisions by parent
        for event in events:
            data = event.get("data") or {}
            if event.get("type") == "tool_call":
                key = (str(data.get("id")), str(data.get("function")))
                self.calls.setdefault(key, []).append(event.get("n"))
            elif event.get("type") == "sandbox_exec":
                self.execs.setdefault(event.get("parent"), []).append(data)
            elif event.get("type") == "approval":
                self.approvals.setdefault(event.get("parent"), []).append(data)
            elif event.get("type") == "tool_result":
                key = (str(data.get("id")), str(data.get("function")))
                self.errors.setdefault(key, []).append(data.get("error"))
            elif event.get("type") == "agent_submission":
                self.submissions.setdefault(str(data.get("call")), []).append(data)

    def error_of(self, call_id: str, function: str) -> str | None:
        """The error kind of the next result of this call (ids may repeat in handoffs)."""
        errors = self.errors.get((call_id, function))
        return errors.pop(0) if errors else None

    def number_of(self, call_id: str, function: str) -> Any:
        """The event number of the next call with this id (ids may repeat in handoffs):
        the parent of what it recorded (its sandbox commands, its approval)."""
        numbers = self.calls.get((call_id, function))
        return numbers.pop(0) if numbers else None

    def submission_of(self, call_id: str) -> dict[str, Any] | None:
        found = self.submissions.get(call_id)
        return found.pop(0) if found else None


def transcript_lines(state: dict[str, Any], events: list[dict[str, Any]], text: Text) -> list[str]:
    """The transcript of the state's conversation (and its handoffs), one line each."""
    handoffs = list((state.get("store") or {}).get("handoffs") or [])
    return _conversation(state.get("messages") or [], Evidence(events), handoffs, text, 1)


def _conversation(
    messages: list[dict[str, Any]],
    evidence: Evidence,
    handoffs: list[dict[str, Any]],
    text: Text,
    depth: int,
) -> list[str]:
    pad = INDENT * depth
    lines: list[str] = []
    turn = 0
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            turn += 1
            lines.append(f"{pad}turn {turn}")
            if message.get("content"):
                lines.append(f"{pad}  assistant: {text(shown_content(message['content']))}")
            for call in message.get("tool_calls") or []:
                calls[str(call.get("id"))] = call
                arguments = text(call.get("arguments"))
                lines.append(f"{pad}  call {text(call.get('function'))}({arguments})")
        elif role == "tool":
            call = calls.get(str(message.get("tool_call_id")), {})
            lines.extend(_result(message, call, evidence, handoffs, text, depth))
        else:
            lines.append(f"{pad}{text(role)}: {text(shown_content(message.get('content', '')))}")
    return lines


def _result(
    message: dict[str, Any],
    call: dict[str, Any],
    evidence: Evidence,
    handoffs: list[dict[str, Any]],
    text: Text,
    depth: int,
) -> list[str]:
    """A tool's result, then what it led to: a submission, or a sub-agent's transcript."""
    pad = INDENT * depth
    call_id, function = str(message.get("tool_call_id")), str(call.get("function", "?"))
    error = evidence.error_of(call_id, function)
    kind = f" ({text(error)})" if error else ""
    number = evidence.number_of(call_id, function)
    lines = [_approval(data, text, pad) for data in evidence.approvals.get(number, [])]
    lines.append(f"{pad}  result {text(function)}{kind}: {text(message.get('content', ''))}")
    for ran in evidence.execs.get(number, []):
        timed_out = ", timed out" if ran.get("timed_out") else ""
        lines.append(
            f"{pad}    ran in sandbox {text(ran.get('sandbox'))}: exit "
            f"{text(ran.get('returncode'))}{timed_out}, {text(ran.get('seconds'))} s"
        )
    submitted = evidence.submission_of(call_id)
    if submitted is not None:
        lines.append(f"{pad}  {_submission(submitted, call, text)}")
    handed = _handoff_of(function, handoffs)
    if handed is not None:
        lines.append(f"{pad}  {_started(handed, text)}:")
        sub = handed.get("messages") or []
        lines.extend(_conversation(sub, evidence, handoffs, text, depth + 1))
    return lines


def _approval(data: dict[str, Any], text: Text, pad: str) -> str:
    """An approver's decision about the call: ``approval reject by auto: why``."""
    decision, approver = text(data.get("decision")), text(data.get("approver"))
    why = f": {text(data['explanation'])}" if data.get("explanation") else ""
    return f"{pad}  approval {decision} by {approver}{why}"


def _submission(data: dict[str, Any], call: dict[str, Any], text: Text) -> str:
    answer = (call.get("arguments") or {}).get("answer", "")
    head = f"submission {data.get('attempt')} by {text(data.get('agent'))}: {text(answer)}"
    if not data.get("judged"):
        return f"{head} (not judged during the trial: left to the task's scorers)"
    verdict = "correct" if data.get("correct") else "incorrect"
    return f"{head} (judged {verdict}, {text(data.get('value'))})"


def _started(handed: dict[str, Any], text: Text) -> str:
    """How a sub-agent's conversation began: handed the caller's (``handoff()``), or
    called as a tool on an input of its own (``as_tool()``). A record without ``how``
    (from a run made before it was kept) is shown as a handoff, as it was then."""
    agent = text(handed.get("agent"))
    if handed.get("how") == "as_tool":
        return f"sub-agent {agent}, called as a tool"
    return f"handoff to {agent}"


def _handoff_of(function: str, handoffs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The next kept sub-agent conversation that this call started, if it was a handoff."""
    for index, handed in enumerate(handoffs):
        if handed.get("tool") == function:
            return handoffs.pop(index)
    return None
