"""What an approver decides about one tool call, and who decides: ``Approval``,
``Approver``, ``@approver``, ``ApprovalPolicy`` (Inspect's names and signatures).

An approver is ``async (message, call, view, history) -> Approval``: *message* is the
text of the assistant message making the call, *view* how the call reads to a person,
*history* the conversation so far. A policy gives an approver the tools whose calls it
sees, as globs (see ``_apply``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, overload

import msgspec

from assay._registry import registered
from assay.model import ChatMessage, ToolCall

ApprovalDecision = Literal["approve", "modify", "reject", "terminate", "escalate"]
"""``approve`` runs the call, ``modify`` runs ``Approval.modified`` instead, ``reject``
tells the model the call was rejected, ``terminate`` ends the sample, ``escalate``
hands the call to the next policy that matches it."""

F = TypeVar("F", bound=Callable[..., Any])


class Approval(msgspec.Struct, frozen=True, kw_only=True):
    """One approver's decision about one tool call."""

    decision: ApprovalDecision
    modified: ToolCall | None = None  # the call to run instead (``modify``)
    explanation: str | None = None


class ToolCallContent(msgspec.Struct, frozen=True, kw_only=True):
    """Text showing a tool call to a person (``format``: ``markdown`` or ``text``)."""

    format: Literal["text", "markdown"]
    content: str
    title: str | None = None


class ToolCallView(msgspec.Struct, frozen=True, kw_only=True):
    """How a tool call reads to a person deciding about it."""

    context: ToolCallContent | None = None
    call: ToolCallContent | None = None


class Approver(Protocol):
    """Decides about a tool call before it runs."""

    async def __call__(
        self,
        message: str,
        call: ToolCall,
        view: ToolCallView,
        history: list[ChatMessage],
    ) -> Approval:
        """The decision about *call* (made in the assistant message *message*)."""
        ...


@dataclass
class ApprovalPolicy:
    """*approver* decides about the calls of *tools* (names or globs)."""

    approver: Approver
    tools: str | list[str]


@overload
def approver(factory: F, *, name: str | None = None) -> F: ...
@overload
def approver(factory: None = None, *, name: str | None = None) -> Callable[[F], F]: ...
def approver(factory: F | None = None, *, name: str | None = None) -> Any:
    """Register an approver factory: ``@approver`` or ``@approver(name="...")``; the
    name is what the evidence records as having decided."""
    if factory is None:
        return registered("approver", name)
    return registered("approver", name)(factory)
