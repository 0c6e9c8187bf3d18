"""Applying the trial's approval policies to a tool call before it runs.

As in Inspect, a policy's globs are matched (with a ``*`` added) against the call as
``name(arg=value, ...)``, so ``"bash"`` covers every ``bash`` call and
``"bash(cmd='ls*"`` only some. The first matching policy decides; ``escalate`` passes
the call to the next matching one; a call no policy decides (none matches, or all
escalate) is rejected. With no policies at all, every call runs.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from assay._registry import lookup, registry_info
from assay._scope import Scope
from assay.approval._approval import (
    Approval,
    ApprovalPolicy,
    Approver,
    ToolCallContent,
    ToolCallView,
)
from assay.errors import ConfigError
from assay.model import ChatMessage, ToolCall

_policies: ContextVar[tuple[ApprovalPolicy, ...]] = ContextVar("assay_approval", default=())


def approval_scope(policies: Sequence[ApprovalPolicy]) -> Scope[tuple[ApprovalPolicy, ...]]:
    """Apply *policies* to the tool calls made inside the block (one trial's)."""
    return Scope(_policies, tuple(policies))


def check_policies(policies: object) -> tuple[ApprovalPolicy, ...]:
    """*policies* (a policy, a list of them, or an approval file's path: Inspect's
    ``approval="approval.yaml"``) as a tuple, or a ConfigError."""
    if policies is None:
        return ()
    if isinstance(policies, str | Path):
        from assay.approval._file import policies_from_file

        return policies_from_file(Path(policies))
    items = policies if isinstance(policies, list | tuple) else [policies]
    for item in items:
        if not isinstance(item, ApprovalPolicy):
            raise ConfigError("approval.bad_policy", value=type(item).__name__)
    return tuple(items)


def policies_record(policies: Sequence[ApprovalPolicy]) -> list[dict[str, Any]]:
    """What the spec records of *policies* (so its digest binds them): each approver's
    name and, for a registered one, the arguments it was made with; the globs."""
    records: list[dict[str, Any]] = []
    for policy in policies:
        record: dict[str, Any] = {"approver": approver_name(policy.approver)}
        record["tools"] = policy.tools
        info = registry_info(policy.approver)
        if info is not None and info.args:
            record["args"] = info.args
        records.append(record)
    return records


def rebuild_policies(
    recorded: list[Any] | None, own: tuple[ApprovalPolicy, ...]
) -> tuple[ApprovalPolicy, ...]:
    """The policies a frozen spec records, for a resume or a cluster's workers: the
    task's own when they are the ones recorded, else (an eval's ``approval=``) made
    again from their registered approvers."""
    if not recorded:
        return ()
    if recorded == policies_record(own):
        return own
    return tuple(ApprovalPolicy(_approver_of(r), r["tools"]) for r in recorded)


def _approver_of(record: dict[str, Any]) -> Approver:
    name, args = str(record["approver"]), record.get("args") or {}
    factory = lookup("approver", name)
    if factory is None or "'$" in repr(args):  # unregistered, or arguments not data
        raise ConfigError("approval.not_rebuilt", name=name)
    approver: Approver = factory(**args)
    return approver


def approver_name(approver: Approver) -> str:
    """The approver's registered name, else its function's name."""
    info = registry_info(approver)
    if info is not None:
        return info.name
    return getattr(approver, "__qualname__", type(approver).__name__)


def active() -> bool:
    """Whether the running trial has approval policies."""
    return bool(_policies.get())


async def decide(
    message: str, call: ToolCall, history: list[ChatMessage], viewer: Any = None
) -> tuple[Approval, str]:
    """The decision about *call* under the trial's policies, and who made it. Approvers
    see the call as the tool's *viewer* shows it (``@tool(viewer=...)``), as in Inspect,
    else as its name and arguments."""
    text = _call_text(call)
    view = _view(call, text, viewer)
    matched = False
    for policy in _policies.get():
        globs = [policy.tools] if isinstance(policy.tools, str) else policy.tools
        if not any(fnmatch.fnmatchcase(text, glob + "*") for glob in globs):
            continue
        matched = True
        approval = await policy.approver(message, call, view, history)
        if approval.decision != "escalate":
            return approval, approver_name(policy.approver)
    why = "approval granted" if matched else "approvers registered"
    return Approval(decision="reject", explanation=f"No {why} for tool {call.function}"), "policy"


def _view(call: ToolCall, text: str, viewer: Any) -> ToolCallView:
    """The tool's own view of *call* (Inspect's ``ToolCallViewer`` returns a
    ``ToolCallView``; plain text is taken as markdown), else a code block of *text*."""
    shown = viewer(call) if viewer is not None else None
    if isinstance(shown, ToolCallView):
        return shown
    if isinstance(shown, str):
        return ToolCallView(call=ToolCallContent(format="markdown", content=shown))
    return ToolCallView(call=ToolCallContent(format="markdown", content=f"```\n{text}\n```"))


def _call_text(call: ToolCall) -> str:
    arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"{call.function}({arguments})"
