"""The Gemini ``generateContent`` wire format, to and from assay's own types.

Gemini differs from chat completions in four ways that matter here: the system prompt is
``system_instruction``, not a message; the assistant's role is ``model``; a turn is a list
of ``parts`` (text, ``inline_data`` images, ``function_call``, ``function_response``,
thoughts marked ``thought``); and a tool result names its function, not a call id, so the
name is looked up from the call it answers. Requests are plain dicts, which the SDK
validates into its own types.
"""

from __future__ import annotations

import base64
from typing import Any

from assay.model._config import GenerateConfig
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
from assay.model._output import ChatCompletionChoice, ModelOutput, ModelUsage, StopReason

UNSUPPORTED = (
    "logit_bias",
    "best_of",
    "parallel_tool_calls",
    "reasoning_effort",
    "verbosity",
    "effort",
)
"""GenerateConfig fields ``generateContent`` has no place for: refused, never dropped."""

_STOP: dict[str, StopReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "tool_calls",
}

_CONFIG_FIELDS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_output_tokens",
    "stop": "stop_sequences",
    "seed": "seed",
    "num_choices": "candidate_count",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
"""GenerateConfig fields and the ``GenerateContentConfig`` fields they become."""

_MODES = {"auto": "AUTO", "none": "NONE", "any": "ANY"}


def unsupported(config: GenerateConfig) -> list[str]:
    """The fields *config* sets that ``generateContent`` cannot take."""
    return [f for f in UNSUPPORTED if getattr(config, f) is not None]


def request_params(
    model: str, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
) -> dict[str, Any]:
    """The ``models.generate_content`` arguments for one call."""
    settings: dict[str, Any] = {
        wire: value
        for field, wire in _CONFIG_FIELDS.items()
        if (value := getattr(config, field)) is not None
    }
    system = "\n\n".join(m.text for m in messages if m.role == "system")
    if system:
        settings["system_instruction"] = system
    if config.logprobs:
        settings["response_logprobs"] = True
        if config.top_logprobs is not None:
            settings["logprobs"] = config.top_logprobs
    if config.response_schema is not None:
        settings["response_mime_type"] = "application/json"
        settings["response_json_schema"] = config.response_schema.json_schema
    if config.reasoning_tokens is not None:
        settings["thinking_config"] = {"thinking_budget": config.reasoning_tokens}
    if tools:
        settings["tools"] = [{"function_declarations": [_declaration(t) for t in tools]}]
        if config.tool_choice is not None:
            settings["tool_config"] = {"function_calling_config": _calling(config.tool_choice)}
    if config.extra_body:  # the SDK merges these into the request body
        settings["http_options"] = {"extra_body": dict(config.extra_body)}
    if config.extra_headers:  # and sends these with the call's own headers
        http_options = settings.setdefault("http_options", {})
        http_options["headers"] = dict(config.extra_headers)
    return {"model": model, "contents": contents(messages), "config": settings}


def contents(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as Gemini turns (``user`` and ``model``; tool results are user
    parts), consecutive turns of one role merged."""
    names: dict[str, str] = {}
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        for call in message.tool_calls or []:
            names[call.id] = call.function
        role = "model" if message.role == "assistant" else "user"
        parts = _parts(message, names)
        if turns and turns[-1]["role"] == role:
            turns[-1]["parts"].extend(parts)
        else:
            turns.append({"role": role, "parts": parts})
    return turns


def _parts(message: ChatMessage, names: dict[str, str]) -> list[dict[str, Any]]:
    if message.role == "tool":
        name = names.get(message.tool_call_id or "", message.tool_call_id or "tool")
        response = {"name": name, "response": {"content": message.text}}
        return [{"function_response": response}]
    parts = [_part(p) for p in _content(message) if not _skipped(p)]
    for call in message.tool_calls or []:
        parts.append({"function_call": {"name": call.function, "args": call.arguments}})
    return parts or [{"text": ""}]


def _content(message: ChatMessage) -> list[Content]:
    if isinstance(message.content, str):
        return [ContentText(message.content)]
    return list(message.content)


def _skipped(part: Content) -> bool:
    """Empty text, and reasoning (Gemini's thoughts are not sent back)."""
    return isinstance(part, ContentReasoning) or (isinstance(part, ContentText) and not part.text)


def _part(part: Content) -> dict[str, Any]:
    if isinstance(part, ContentImage):
        if is_url(part.image):
            return {"file_data": {"file_uri": part.image}}
        media_type, data = split_data_uri(image_data_uri(part.image))
        return {"inline_data": {"mime_type": media_type, "data": base64.b64decode(data)}}
    assert isinstance(part, ContentText)
    return {"text": part.text}


def _declaration(tool: dict[str, Any]) -> dict[str, Any]:
    """A function declaration from OpenAI's tool form, a bare schema or Anthropic's."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    declared: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        declared["description"] = tool["description"]
    schema = tool.get("parameters") or tool.get("input_schema")
    if schema:
        declared["parameters_json_schema"] = schema
    return declared


def _calling(choice: str) -> dict[str, Any]:
    """``tool_choice`` as a function-calling mode (a tool's name: ANY, only that one)."""
    if choice in _MODES:
        return {"mode": _MODES[choice]}
    return {"mode": "ANY", "allowed_function_names": [choice]}


def parse_response(body: Any, fallback_model: str) -> ModelOutput:
    """A ``GenerateContentResponse`` as a ModelOutput; ``ValueError`` with no candidate
    (a prompt the server blocked says why)."""
    candidates = body.candidates or []
    if not candidates:
        feedback = getattr(body, "prompt_feedback", None)
        reason = getattr(feedback, "block_reason", None)
        raise ValueError(f"no answer (prompt blocked: {reason})" if reason else "no answer")
    first, *others = [_choice(c, i) for i, c in enumerate(candidates)]
    usage = body.usage_metadata
    output_tokens = 0
    if usage is not None:
        output_tokens = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    return ModelOutput(
        model=str(body.model_version or fallback_model),
        message=first.message,
        stop_reason=first.stop_reason,
        usage=ModelUsage(int(usage.prompt_token_count or 0) if usage else 0, int(output_tokens)),
        alternatives=others or None,
    )


def _choice(candidate: Any, index: int) -> ChatCompletionChoice:
    texts: list[str] = []
    thoughts: list[Content] = []
    calls: list[ToolCall] = []
    parts = candidate.content.parts if candidate.content is not None else None
    for number, part in enumerate(parts or []):
        if part.function_call is not None:
            call = part.function_call
            call_id = call.id or f"call_{index}_{number}"
            calls.append(ToolCall(call_id, call.name or "", dict(call.args or {})))
        elif part.text is not None and part.thought:
            thoughts.append(ContentReasoning(part.text))
        elif part.text is not None:
            texts.append(part.text)
    text = "".join(texts)
    content: str | list[Content] = [*thoughts, ContentText(text)] if thoughts else text
    reason = candidate.finish_reason
    name = getattr(reason, "name", None) or (str(reason) if reason is not None else "STOP")
    stop = "tool_calls" if calls else _STOP.get(name, "unknown")
    return ChatCompletionChoice(ChatMessage("assistant", content, calls or None), stop)
