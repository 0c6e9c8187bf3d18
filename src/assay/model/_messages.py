"""Chat messages: what is said to a model and what it says back."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(msgspec.Struct, frozen=True):
    """A model's request to call a tool: which one, with which arguments."""

    id: str
    function: str
    arguments: dict[str, Any]


class ChatMessage(msgspec.Struct, omit_defaults=True):
    """One message in a conversation.

    ``tool_calls`` is set on assistant messages that call tools; ``tool_call_id`` on the
    tool message that answers one.
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        """The message's text."""
        return self.content

    @text.setter
    def text(self, value: str) -> None:
        """Replace the message's text (``state.user_prompt.text = ...``, as in Inspect)."""
        self.content = value


def system_message(content: str) -> ChatMessage:
    """A system message."""
    return ChatMessage("system", content)


def user_message(content: str) -> ChatMessage:
    """A user message."""
    return ChatMessage("user", content)


def assistant_message(content: str, tool_calls: list[ToolCall] | None = None) -> ChatMessage:
    """An assistant message, optionally calling tools."""
    return ChatMessage("assistant", content, tool_calls)


def tool_message(content: str, tool_call_id: str) -> ChatMessage:
    """A tool's answer to one tool call."""
    return ChatMessage("tool", content, tool_call_id=tool_call_id)
