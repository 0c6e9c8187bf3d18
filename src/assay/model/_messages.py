"""Chat messages: what is said to a model and what it says back."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from assay.model._content import Content, ContentImage, ContentText, image_data_uri

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(msgspec.Struct, frozen=True):
    """A model's request to call a tool: which one, with which arguments."""

    id: str
    function: str
    arguments: dict[str, Any]


class ChatMessage(msgspec.Struct, omit_defaults=True):
    """One message in a conversation.

    ``content`` is text, or a list of parts (``ContentText``, ``ContentImage``,
    ``ContentReasoning``) as in Inspect. ``tool_calls`` is set on assistant messages that
    call tools; ``tool_call_id`` on the tool message that answers one.
    """

    role: Role
    content: str | list[Content]
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        """The message's text: the content, or its text parts joined by newlines (images
        and reasoning left out)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content if isinstance(part, ContentText))

    @text.setter
    def text(self, value: str) -> None:
        """Replace the message's text (``state.user_prompt.text = ...``, as in Inspect):
        a list's text parts give way to one new part after the others (images kept)."""
        if isinstance(self.content, str):
            self.content = value
        else:
            kept = [part for part in self.content if not isinstance(part, ContentText)]
            self.content = [*kept, ContentText(value)]

    @property
    def images(self) -> list[ContentImage]:
        """The images in the content (none for text content)."""
        if isinstance(self.content, str):
            return []
        return [part for part in self.content if isinstance(part, ContentImage)]


def with_images_inlined(messages: list[ChatMessage]) -> list[ChatMessage]:
    """*messages* with every image given as a file path read into a data URI (the others
    as they are); the same list when there is none. ``ValueError`` names a bad file."""
    for message in messages:  # a loop, not any(genexpr): every model call asks this
        if type(message.content) is not str and message.images:
            break
    else:
        return messages
    return [_inlined(m) if m.images else m for m in messages]


def _inlined(message: ChatMessage) -> ChatMessage:
    assert not isinstance(message.content, str)
    parts: list[Content] = [
        msgspec.structs.replace(p, image=image_data_uri(p.image))
        if isinstance(p, ContentImage)
        else p
        for p in message.content
    ]
    return msgspec.structs.replace(message, content=parts)


def system_message(content: str | list[Content]) -> ChatMessage:
    """A system message."""
    return ChatMessage("system", content)


def user_message(content: str | list[Content]) -> ChatMessage:
    """A user message."""
    return ChatMessage("user", content)


def assistant_message(
    content: str | list[Content], tool_calls: list[ToolCall] | None = None
) -> ChatMessage:
    """An assistant message, optionally calling tools."""
    return ChatMessage("assistant", content, tool_calls)


def tool_message(content: str | list[Content], tool_call_id: str) -> ChatMessage:
    """A tool's answer to one tool call."""
    return ChatMessage("tool", content, tool_call_id=tool_call_id)


class _ByRole(type):
    """``isinstance(m, ChatMessageUser)``: a ChatMessage of that role (Inspect's classes
    are types; here they build a ChatMessage, so a message is one type wherever it goes)."""

    role: Role

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, ChatMessage) and instance.role == cls.role


_IGNORED = frozenset({"id", "source", "metadata", "model", "function", "internal"})
"""Inspect's message fields assay keeps nowhere (taken, so ported code runs)."""


def _by_role(role: Role, content: str | list[Content], extra: dict[str, Any]) -> ChatMessage:
    unknown = sorted(set(extra) - _IGNORED - {"tool_calls", "tool_call_id"})
    if unknown:
        raise TypeError(f"ChatMessage{role.title()}() got unexpected arguments: {unknown}")
    return ChatMessage(role, content, extra.get("tool_calls"), extra.get("tool_call_id"))


class ChatMessageSystem(metaclass=_ByRole):
    """A system message, as Inspect spells it: ``ChatMessageSystem(content=...)``."""

    role: Role = "system"

    def __new__(cls, content: str | list[Content], **extra: Any) -> ChatMessage:  # type: ignore[misc]
        return _by_role("system", content, extra)


class ChatMessageUser(metaclass=_ByRole):
    """A user message, as Inspect spells it: ``ChatMessageUser(content=[ContentText(...),
    ContentImage(...)])``."""

    role: Role = "user"

    def __new__(cls, content: str | list[Content], **extra: Any) -> ChatMessage:  # type: ignore[misc]
        return _by_role("user", content, extra)


class ChatMessageAssistant(metaclass=_ByRole):
    """An assistant message, as Inspect spells it (``tool_calls=`` optional)."""

    role: Role = "assistant"

    def __new__(cls, content: str | list[Content], **extra: Any) -> ChatMessage:  # type: ignore[misc]
        return _by_role("assistant", content, extra)


class ChatMessageTool(metaclass=_ByRole):
    """A tool's answer, as Inspect spells it: ``ChatMessageTool(content=..., tool_call_id=...)``."""

    role: Role = "tool"

    def __new__(cls, content: str | list[Content], **extra: Any) -> ChatMessage:  # type: ignore[misc]
        return _by_role("tool", content, extra)
