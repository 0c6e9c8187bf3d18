"""What a model returns: the completion, the message, why it stopped, and token usage."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from assay._digest import canonical_json
from assay.model._messages import ChatMessage, ToolCall, assistant_message

StopReason = Literal["stop", "max_tokens", "tool_calls", "content_filter", "unknown"]


class ModelUsage(msgspec.Struct, frozen=True):
    """Tokens spent on one call (or summed over several)."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


class TopLogprob(msgspec.Struct, frozen=True):
    """One of the likeliest tokens at a position, with its log probability."""

    token: str
    logprob: float


class Logprob(msgspec.Struct, frozen=True):
    """An output token's log probability, and the likeliest alternatives if asked for."""

    token: str
    logprob: float
    top_logprobs: list[TopLogprob] = []


class ChatCompletionChoice(msgspec.Struct):
    """One of the answers a call gave (Inspect's name): ``num_choices`` asks for several."""

    message: ChatMessage
    stop_reason: StopReason = "stop"
    logprobs: list[Logprob] | None = None


class ModelOutput(msgspec.Struct):
    """A model's answer to one generate call; ``logprobs`` (one per output token) only
    when the config asked for them and the provider gave them. With ``num_choices``, the
    answers after the first are ``alternatives``; ``choices`` lists them all, as Inspect's
    ``output.choices`` does."""

    model: str
    message: ChatMessage
    stop_reason: StopReason = "stop"
    usage: ModelUsage = ModelUsage()
    cached: bool = False
    logprobs: list[Logprob] | None = None
    alternatives: list[ChatCompletionChoice] | None = None

    @property
    def choices(self) -> list[ChatCompletionChoice]:
        """Every answer of the call, the first (``message``) first."""
        first = ChatCompletionChoice(self.message, self.stop_reason, self.logprobs)
        return [first, *(self.alternatives or [])]

    @property
    def completion(self) -> str:
        """The text of the answer."""
        return self.message.text

    @completion.setter
    def completion(self, text: str) -> None:
        """Replace the answer's text (a solver post-processing it, as in Inspect)."""
        self.message.text = text

    @staticmethod
    def from_content(model: str, content: str, usage: ModelUsage | None = None) -> ModelOutput:
        """An answer made of plain text."""
        return ModelOutput(model, assistant_message(content), usage=usage or ModelUsage())

    @staticmethod
    def for_tool_call(
        model: str,
        tool_name: str,
        tool_arguments: dict[str, Any],
        tool_call_id: str | None = None,
        content: str = "",
    ) -> ModelOutput:
        """An answer that calls one tool (Inspect's name): scripts a mock model's turn.
        Without *tool_call_id*, the id is made from the call, so a script gives the same
        conversation (and the same evidence) on every run."""
        call = ToolCall(
            tool_call_id or _call_id(tool_name, tool_arguments), tool_name, tool_arguments
        )
        message = assistant_message(content, [call])
        return ModelOutput(model, message, stop_reason="tool_calls")

    @staticmethod
    def empty(model: str = "") -> ModelOutput:
        """No answer yet (a fresh TaskState)."""
        return ModelOutput(model, assistant_message(""))

    def to_record(self) -> dict[str, Any]:
        """The output as JSON values, for the evidence: ``alternatives`` only when the
        call gave several answers (Inspect's ``ModelOutput`` has no such field, and a
        ``null`` in every record would be noise)."""
        record: dict[str, Any] = msgspec.to_builtins(self)
        if self.alternatives is None:
            del record["alternatives"]
        return record

    def record_json(self) -> bytes:
        """``canonical_json(self.to_record())``, encoded from the struct itself (no dicts
        made first: once a model call). Its fields in sorted order start with
        ``alternatives``, so without any the record is the encoding less that first field."""
        data = canonical_json(self)
        if self.alternatives is None:
            if not data.startswith(_NO_ALTERNATIVES):  # a subclass with a field before it
                return canonical_json(self.to_record())
            return b"{" + data[len(_NO_ALTERNATIVES) :]
        return data


_NO_ALTERNATIVES = b'{"alternatives":null,'


def _call_id(tool_name: str, tool_arguments: dict[str, Any]) -> str:
    from assay._digest import sha256_hex

    return "for_tool_call_" + sha256_hex(canonical_json([tool_name, tool_arguments]))[:12]
