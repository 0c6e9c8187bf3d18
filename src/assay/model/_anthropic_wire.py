"""The Anthropic Messages wire format, to and from assay's own types.

Anthropic differs from chat completions in three ways that matter here: the system
prompt is a parameter, not a message; tool calls are ``tool_use`` content blocks of the
assistant and their results ``tool_result`` blocks of the next user turn; and roles must
alternate, so consecutive turns of the same role (several tool results) are one message.
"""

from __future__ import annotations

import json
from typing import Any

from assay.model._config import TOOL_CHOICES, GenerateConfig, ResponseSchema
from assay.model._content import (
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
    image_data_uri,
    is_url,
    split_data_uri,
)
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
    system = "\n\n".join(m.text for m in messages if m.role == "system")
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
        if config.parallel_tool_calls is not None and config.tool_choice != "none":
            chosen = params.setdefault("tool_choice", {"type": "auto"})
            chosen["disable_parallel_tool_use"] = not config.parallel_tool_calls
    if config.response_schema is not None:  # a tool the model must call: its input is the answer
        schema = config.response_schema
        params["tools"] = [*params.get("tools", []), schema_tool(schema)]
        params["tool_choice"] = {"type": "tool", "name": schema.name}
    if config.reasoning_tokens is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": config.reasoning_tokens}
    if config.temperature is not None:
        params["temperature"] = config.temperature
    if config.top_p is not None:
        params["top_p"] = config.top_p
    if config.top_k is not None:
        params["top_k"] = config.top_k
    if config.effort is not None:
        params["output_config"] = {"effort": config.effort}
    if config.extra_body:  # the SDK merges these into the request body
        params["extra_body"] = dict(config.extra_body)
    if config.extra_headers:  # the SDK sends these with its own
        params["extra_headers"] = dict(config.extra_headers)
    if config.stop:
        params["stop_sequences"] = config.stop
    if config.cache_prompt is True or (config.cache_prompt == "auto" and tools):
        mark_cache(params)
    return params


def mark_cache(params: dict[str, Any]) -> None:
    """Prompt caching: ``cache_control`` on the system prompt, the last tool and the
    last block of the last message, so the prefix up to each is cached (three of the
    four breakpoints the Messages API allows)."""
    ephemeral = {"type": "ephemeral"}
    if "system" in params:
        params["system"] = [{"type": "text", "text": params["system"], "cache_control": ephemeral}]
    if params.get("tools"):
        params["tools"][-1] = {**params["tools"][-1], "cache_control": ephemeral}
    if params["messages"] and params["messages"][-1]["content"]:
        blocks = params["messages"][-1]["content"]
        blocks[-1] = {**blocks[-1], "cache_control": ephemeral}


UNSUPPORTED = ("frequency_penalty", "presence_penalty", "logit_bias", "best_of", "verbosity")
"""GenerateConfig fields the Messages API has no place for: refused, never dropped."""


def unsupported(config: GenerateConfig) -> list[str]:
    """The fields *config* sets that the Messages API cannot take (``num_choices`` above
    1 too: one call gives one answer)."""
    names = [f for f in UNSUPPORTED if getattr(config, f) is not None]
    if config.num_choices is not None and config.num_choices > 1:
        names.append("num_choices")
    return names


def schema_tool(schema: ResponseSchema) -> dict[str, Any]:
    """The tool a ``ResponseSchema`` becomes: its input schema is the answer's."""
    tool: dict[str, Any] = {"name": schema.name, "input_schema": schema.json_schema}
    tool["description"] = schema.description or "Give the answer in this form."
    return tool


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    content = _content_blocks(message)
    if message.role == "tool":
        result = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        return [{**result, "content": content if message.images else message.text}]
    blocks: list[dict[str, Any]] = list(content)
    for call in message.tool_calls or []:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.function, "input": call.arguments}
        )
    return blocks or [{"type": "text", "text": ""}]


def _content_blocks(message: ChatMessage) -> list[dict[str, Any]]:
    """The content as Messages blocks (an empty text is no block)."""
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    return [_block(part) for part in message.content if not _empty_text(part)]


def _empty_text(part: Content) -> bool:
    return isinstance(part, ContentText) and not part.text


def _block(part: Content) -> dict[str, Any]:
    if isinstance(part, ContentText):
        return {"type": "text", "text": part.text}
    if isinstance(part, ContentImage):
        return {"type": "image", "source": image_source(part.image)}
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.reasoning}
    return {"type": "thinking", "thinking": part.reasoning, "signature": part.signature or ""}


def image_source(image: str) -> dict[str, Any]:
    """An image as Anthropic takes it: base64 data with its media type, or a URL."""
    if is_url(image):
        return {"type": "url", "url": image}
    media_type, data = split_data_uri(image_data_uri(image))
    return {"type": "base64", "media_type": media_type, "data": data}


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


def parse_message(
    body: Any, fallback_model: str, schema: ResponseSchema | None = None
) -> ModelOutput:
    """A ``Message`` from the SDK as a ModelOutput: text joined, tool_use as ToolCall,
    thinking as ``ContentReasoning``; with *schema*, a call of its tool is the answer
    (its input as JSON text), not a tool call."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thoughts: list[Content] = []
    stop = body.stop_reason
    for block in body.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "thinking":
            thoughts.append(ContentReasoning(block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            thoughts.append(ContentReasoning(block.data, redacted=True))
        elif block.type == "tool_use" and schema is not None and block.name == schema.name:
            texts.append(json.dumps(block.input))
            stop = "end_turn" if stop == "tool_use" else stop
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {"input": block.input}
            calls.append(ToolCall(block.id, block.name, arguments))
    usage = ModelUsage(int(body.usage.input_tokens or 0), int(body.usage.output_tokens or 0))
    text = "".join(texts)
    content: str | list[Content] = [*thoughts, ContentText(text)] if thoughts else text
    return ModelOutput(
        model=str(body.model or fallback_model),
        message=ChatMessage("assistant", content, calls or None),
        stop_reason=_STOP.get(stop, "unknown"),
        usage=usage,
    )
