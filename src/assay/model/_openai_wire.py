"""The OpenAI chat-completions wire format, to and from assay's own types.

Requests are plain dicts, encoded to JSON here (the SDK sends the bytes as given).
Responses are read from the raw bytes with msgspec into the small structs below, then
turned into a ``ModelOutput`` at once: the SDK's pydantic models are never built, so
none reach the evidence and the per-call cost stays small. Any OpenAI-compatible
server (vLLM, Ollama, llama.cpp) answers this shape.
"""

from __future__ import annotations

from typing import Any

import msgspec

from assay.model._config import GenerateConfig, ResponseSchema
from assay.model._content import (
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
    image_data_uri,
)
from assay.model._messages import ChatMessage, ToolCall
from assay.model._output import (
    ChatCompletionChoice,
    Logprob,
    ModelOutput,
    ModelUsage,
    StopReason,
    TopLogprob,
)


class _Function(msgspec.Struct):
    name: str = ""
    arguments: str = ""


class _ToolCall(msgspec.Struct):
    function: _Function
    id: str = ""


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    reasoning_content: str | None = None  # vLLM, DeepSeek, llama.cpp
    reasoning: str | None = None  # OpenRouter, newer vLLM
    tool_calls: list[_ToolCall] | None = None


class _Top(msgspec.Struct):
    token: str
    logprob: float


class _Token(msgspec.Struct):
    token: str
    logprob: float
    top_logprobs: list[_Top] | None = None


class _Logprobs(msgspec.Struct):
    content: list[_Token] | None = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: str | None = None
    logprobs: _Logprobs | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Completion(msgspec.Struct):
    choices: list[_Choice]
    model: str | None = None
    usage: _Usage | None = None


_decode_completion = msgspec.json.Decoder(_Completion).decode
_decode_args = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

_STOP: dict[str | None, StopReason] = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def encode_request(
    model: str, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
) -> bytes:
    """The JSON body of one call (msgspec encodes it several times faster than ``json``).
    Without tools, the bytes of ``request_params`` are put together from the part before
    the messages and the part after them, kept from the last call with the same model
    and config, and the messages encoded as they are when they are plain text (no dict
    made for the request or for a message: 2 of the 6 µs a call spent here)."""
    if not tools:
        parts = _body_parts(model, config)
        if parts is not None:
            return b"".join((parts[0], _encode_messages(messages), parts[1]))
    return _encode(request_params(model, messages, tools, config))


def _encode_messages(messages: list[ChatMessage]) -> bytes:
    """``[wire_message(m) for m in messages]`` encoded; a text message without tool calls
    is encoded from the struct itself (its fields but the defaults are role and
    content: the wire form)."""
    for message in messages:
        if (
            type(message) is not ChatMessage
            or type(message.content) is not str
            or message.tool_calls is not None
            or message.tool_call_id is not None
        ):
            return _encode([wire_message(m) for m in messages])
    return _encode(messages)


_Parts = tuple[bytes, bytes] | None
_last_parts: tuple[str, GenerateConfig | None, _Parts] = ("", None, None)
"""The model, config and body parts ``_body_parts`` gave last (one tuple: threads may
race to replace it)."""


def _body_parts(model: str, config: GenerateConfig) -> _Parts:
    """The body's bytes before and after its messages, when it has no tools; None when
    ``extra_body`` sets ``model`` or ``messages`` (the dict keeps such a key's place)."""
    global _last_parts
    last = _last_parts
    if last[1] is config and last[0] == model:
        return last[2]
    sampling, output, extra = _config_params(config)
    parts: _Parts = None
    if not extra or ("model" not in extra and "messages" not in extra):
        rest = {**sampling, **output, **(extra or {})}  # request_params' order
        tail = b"," + _encode(rest)[1:] if rest else b"}"
        parts = (b'{"model":' + _encode(model) + b',"messages":', tail)
    _last_parts = (model, config, parts)
    return parts


_PLAIN_FIELDS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "reasoning_effort",
    "top_k",
    "frequency_penalty",
    "presence_penalty",
    "best_of",
    "verbosity",
)
"""GenerateConfig fields sent under their own names."""

UNSUPPORTED = ("effort",)
"""GenerateConfig fields chat completions has no place for: refused, never dropped
(``effort`` is Anthropic's ``output_config.effort``; here ``reasoning_effort`` is the
nearest)."""


_last_refused: tuple[GenerateConfig | None, list[str]] = (None, [])


def unsupported(config: GenerateConfig) -> list[str]:
    """The fields *config* sets that chat completions cannot take (not to be changed:
    the list is kept for the next call with the same config, which is frozen)."""
    global _last_refused
    last = _last_refused
    if last[0] is config:
        return last[1]
    refused = [f for f in UNSUPPORTED if getattr(config, f) is not None]
    _last_refused = (config, refused)
    return refused


def header_lines(headers: dict[str, str] | None) -> bytes:
    """``extra_headers`` as HTTP/1.1 header lines (checked by GenerateConfig already)."""
    if not headers:
        return b""
    return "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode("latin-1")


# assay's tool_choice keywords as the chat completions API spells them ("any": "required")
_OPENAI_CHOICES: dict[str, Any] = {"auto": "auto", "none": "none", "any": "required"}


def request_params(
    model: str, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
) -> dict[str, Any]:
    """The ``chat.completions.create`` arguments for one call."""
    params: dict[str, Any] = {"model": model, "messages": [wire_message(m) for m in messages]}
    if tools:
        params["tools"] = [wire_tool(t) for t in tools]
        if config.tool_choice is not None:  # "auto", "none", "any", or a tool's name
            choice = config.tool_choice
            named = {"type": "function", "function": {"name": choice}}
            params["tool_choice"] = _OPENAI_CHOICES.get(choice, named)
    sampling, output, extra = _config_params(config)
    params.update(sampling)
    if tools and config.parallel_tool_calls is not None:
        params["parallel_tool_calls"] = config.parallel_tool_calls
    params.update(output)
    if extra:  # a server's own options, last: they may set what assay does not
        params.update(extra)
    return params


_ConfigParams = tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]
_last: tuple[GenerateConfig | None, _ConfigParams] = (None, ({}, {}, None))
"""The last config ``_config_params`` read and what it gave, as one tuple (threads may
race to replace it): a model's calls share one config object, which is frozen (reading
its ten sampling fields was about a tenth of the provider's profiled CPU a call)."""


def _config_params(config: GenerateConfig) -> _ConfigParams:
    """What *config* sends, in the order it is sent: the sampling fields, then the
    output's form (logprobs, structured output), then ``extra_body``."""
    global _last
    last = _last
    if last[0] is config:
        return last[1]
    sampling: dict[str, Any] = {}
    for field in _PLAIN_FIELDS:
        value = getattr(config, field)
        if value is not None:
            sampling[field] = value
    if config.num_choices is not None:
        sampling["n"] = config.num_choices
    if config.logit_bias is not None:
        sampling["logit_bias"] = config.logit_bias
    output: dict[str, Any] = {}
    if config.logprobs:
        output["logprobs"] = True
        if config.top_logprobs is not None:
            output["top_logprobs"] = config.top_logprobs
    if config.response_schema is not None:
        output["response_format"] = response_format(config.response_schema)
    found = (sampling, output, config.extra_body)
    _last = (config, found)
    return found


def response_format(schema: ResponseSchema) -> dict[str, Any]:
    """Structured output as chat completions (and llama.cpp's server) take it."""
    spec: dict[str, Any] = {"name": schema.name, "schema": schema.json_schema}
    if schema.description is not None:
        spec["description"] = schema.description
    if schema.strict is not None:
        spec["strict"] = schema.strict
    return {"type": "json_schema", "json_schema": spec}


def wire_message(message: ChatMessage) -> dict[str, Any]:
    """One chat message as OpenAI spells it (tool calls with JSON-text arguments)."""
    wire: dict[str, Any] = {"role": message.role, "content": wire_content(message)}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function, "arguments": _encode(call.arguments).decode()},
            }
            for call in message.tool_calls
        ]
        if not wire["content"]:
            wire["content"] = None
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def wire_content(message: ChatMessage) -> str | list[dict[str, Any]]:
    """The content as text, or as parts when it holds an image (reasoning is not sent
    back: the chat-completions wire has no place for it)."""
    if isinstance(message.content, str) or not message.images:
        return message.text
    return [part for p in message.content if (part := _wire_part(p)) is not None]


def _wire_part(part: Content) -> dict[str, Any] | None:
    if isinstance(part, ContentText):
        return {"type": "text", "text": part.text}
    if isinstance(part, ContentImage):
        image: dict[str, Any] = {"url": image_data_uri(part.image)}
        if part.detail != "auto":
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    return None


def wire_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool schema: OpenAI's ``{"type": "function", "function": {...}}`` as given, or a
    bare ``{"name", "description", "parameters"}`` wrapped into it."""
    if tool.get("type") == "function" and "function" in tool:
        return tool
    return {"type": "function", "function": tool}


def parse_completion(body: bytes, fallback_model: str) -> ModelOutput:
    """A chat-completion response body: its first choice, and any others (``n``) as
    ``alternatives``; ``ValueError`` when the body is not one."""
    try:
        completion = _decode_completion(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"not a chat completion ({exc})") from None
    choices = completion.choices
    if not choices:
        raise ValueError("a chat completion without choices")
    message, stop, logprobs = _choice(choices[0])
    others = [ChatCompletionChoice(*_choice(c)) for c in choices[1:]] if len(choices) > 1 else None
    usage = completion.usage
    return ModelOutput(
        completion.model or fallback_model,
        message,
        stop,
        ModelUsage(
            (usage.prompt_tokens or 0) if usage else 0,
            (usage.completion_tokens or 0) if usage else 0,
        ),
        False,
        logprobs,
        others,
    )


def _choice(choice: _Choice) -> tuple[ChatMessage, StopReason, list[Logprob] | None]:
    """A choice's message, stop reason and logprobs."""
    wire = choice.message
    calls = [_tool_call(c) for c in wire.tool_calls] if wire.tool_calls else None
    text = wire.content if wire.content is not None else (wire.refusal or "")
    reasoning = wire.reasoning_content or wire.reasoning
    content: str | list[Content] = (
        [ContentReasoning(reasoning), ContentText(text)] if reasoning else text
    )
    message = ChatMessage("assistant", content, calls)
    return message, _STOP.get(choice.finish_reason, "unknown"), _logprobs(choice.logprobs)


def _tool_call(call: _ToolCall) -> ToolCall:
    """A tool call; arguments that are not a JSON object are kept as text under ``_raw``
    (small models often emit broken JSON, and a tool can then say so)."""
    try:
        arguments = _decode_args(call.function.arguments or "{}")
    except msgspec.DecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = {"_raw": call.function.arguments}
    return ToolCall(call.id, call.function.name, arguments)


def _logprobs(wire: _Logprobs | None) -> list[Logprob] | None:
    if wire is None or wire.content is None:
        return None
    return [
        Logprob(t.token, t.logprob, [TopLogprob(p.token, p.logprob) for p in t.top_logprobs or []])
        for t in wire.content
    ]
