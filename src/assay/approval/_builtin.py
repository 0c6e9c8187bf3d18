"""The built-in approvers: ``auto`` (one fixed decision) and ``human``.

assay runs unattended (many trials at once, often with no terminal), so ``human``
refuses when it is made, in one line, rather than wait for an answer nobody gives.
"""

from __future__ import annotations

from assay.approval._approval import Approval, ApprovalDecision, Approver, approver
from assay.errors import ConfigError
from assay.model import ChatMessage, ToolCall


@approver(name="auto")
def auto_approver(decision: ApprovalDecision = "approve") -> Approver:
    """Give every call it sees the same *decision*."""

    async def approve(
        message: str, call: ToolCall, view: object, history: list[ChatMessage]
    ) -> Approval:
        return Approval(decision=decision, explanation="Automatic decision.")

    return approve


@approver(name="human")
def human_approver(
    choices: list[ApprovalDecision] | None = None,
) -> Approver:
    """Inspect's interactive approver: refused, as assay has no one to ask."""
    raise ConfigError("approval.human")
