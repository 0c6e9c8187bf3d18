"""Approving a model's tool calls before they run, as Inspect's ``inspect_ai.approval``.

``Task(approval=[ApprovalPolicy(auto_approver(), "add"), ...])`` (or ``eval``'s
``approval=``, which wins) gives approvers the calls of the tools their globs match;
each decision is an ``approval`` event under the call's ``tool_call`` in the evidence,
and the policies (approver names and globs) are part of the spec's digest.
See docs/tools.md.
"""

from assay.approval._approval import (
    Approval,
    ApprovalDecision,
    ApprovalPolicy,
    Approver,
    ToolCallContent,
    ToolCallView,
    approver,
)
from assay.approval._builtin import auto_approver, human_approver

__all__ = [
    "Approval",
    "ApprovalDecision",
    "ApprovalPolicy",
    "Approver",
    "ToolCallContent",
    "ToolCallView",
    "approver",
    "auto_approver",
    "human_approver",
]
