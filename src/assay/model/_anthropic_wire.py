"""The Anthropic Messages wire format, to and from assay's own types.

Anthropic differs from chat completions in three ways that matter here: the system
prompt is a parameter, not a message; tool calls are ``tool_use`` content blocks of the
assistant and their results ``tool_result`` blocks of the next user turn; and roles must
alternate, so consecutive turns of the same role (several tool results) are one message.
"""

from __future__ import annotations

from typing import Any

from assay.model._config import TOOL_CHOICES, GenerateConfig
from assay.model._messages import ChatMessage, ToolCall
from assay.model._output import ModelOutput, ModelUsage, StopReason

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; this is sent when the config sets none."""

_STOP: dict[str | None, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "max_tokens",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def request_params(
    model: str, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
) -> dict[str, Any]:
    """The ``messages.create`` arguments for one call."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    params: dict[str, Any] = {
        "model": model,
        "messages": turns,
        "max_tokens": config.max_tokens if config.max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    if system:
        params["system"] = system
    if tools:
        params["tools"] = [wire_tool(t) for t in tools]
        if config.tool_choice is not None:  # "auto", "none", "any", or a tool's name
            choice = config.tool_choice
            named = {"type": "tool", "name": choice}
            params["tool_choice"] = {"type": choice} if choice in TOOL_CHOICES else named
    if config.temperature is not None:
        params["temperature"] = config.temperature
    if config.top_p is not None:
        params["top_p"] = config.top_p
    if config.stop:
        params["stop_sequences"] = config.stop
    return params


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        result = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        return [{**result, "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls or []:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.function, "input": call.arguments}
        )
    return blocks or [{"type": "text", "text": ""}]


def wire_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool schema as Anthropic wants it (``name``, ``description``, ``input_schema``),
    from OpenAI's ``{"type": "function", "function": {...}}``, a bare function schema
    (``parameters``), or Anthropic's own form, given as is."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    if "input_schema" in tool:
        return tool
    wired: dict[str, Any] = {
        "name": tool["name"],
        "input_schema": tool.get("parameters") or {"type": "object", "properties": {}},
    }
    if tool.get("description"):
        wired["description"] = tool["description"]
    return wired


def parse_message(body: Any, fallback_model: str) -> ModelOutput:
    """A ``Message`` from the SDK as a ModelOutput: text joined, tool_use as ToolCall."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in body.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {"input": block.input}
            calls.append(ToolCall(block.id, block.name, arguments))
    usage = ModelUsage(int(body.usage.input_tokens or 0), int(body.usage.output_tokens or 0))
    return ModelOutput(
        model=str(body.model or fallback_model),
        message=ChatMessage("assistant", "".join(texts), calls or None),
        stop_reason=_STOP.get(body.stop_reason, "unknown"),
        usage=usage,
    )
