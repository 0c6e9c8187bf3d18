"""Generation settings: one record, merged from task, model and call, most specific last."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from assay.errors import ConfigError

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
"""The ``reasoning_effort`` values (Inspect's and OpenAI's)."""

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]

REASONING_SUMMARIES = ("none", "concise", "detailed", "auto")
"""The ``reasoning_summary`` values (Inspect's)."""

ReasoningSummary = Literal["none", "concise", "detailed", "auto"]

VERBOSITIES = ("low", "medium", "high")
"""The ``verbosity`` values (Inspect's and OpenAI's)."""

Verbosity = Literal["low", "medium", "high"]

EFFORTS = ("low", "medium", "high", "max")
"""The ``effort`` values (Inspect's; Anthropic's ``output_config.effort``)."""

Effort = Literal["low", "medium", "high", "max"]

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
)
"""Headers that carry a credential: a config is recorded in the run's spec, so these are
refused in ``extra_headers`` (keys come from the environment, never a config)."""


class ResponseSchema(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Structured output: the answer must be JSON matching *json_schema* (Inspect's name).

    Sent to OpenAI-compatible servers (llama.cpp too) as ``response_format`` of type
    ``json_schema``, and to Anthropic as a tool named *name* the model is made to call,
    whose input is then the answer's text (JSON).

    Attributes:
        name: the schema's name (letters, digits, ``_`` and ``-``).
        json_schema: a JSON Schema, as a dict.
        description: what the answer is, for the model.
        strict: ask the server to hold the answer to the schema exactly (OpenAI).
    """

    name: str
    json_schema: dict[str, Any]
    description: str | None = None
    strict: bool | None = None


TOOL_CHOICES = ("auto", "none", "any")
"""The ``tool_choice`` values that are not a tool's name (a tool named so cannot be forced)."""


class GenerateConfig(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """How to sample. ``None`` means "not set here": the less specific setting applies.

    Attributes:
        temperature: sampling temperature.
        top_p: nucleus sampling mass.
        max_tokens: cap on output tokens.
        stop: strings that end generation.
        seed: sampling seed, where the provider supports one.
        logprobs: return log probabilities of the output tokens.
        top_logprobs: with ``logprobs``, also the N likeliest tokens at each position.
        max_connections: concurrent calls to this model (the third concurrency gate).
        max_retries: retries of a call's infrastructure failures (429, 5xx, timeouts,
            dropped connections) before the trial's attempt fails; default 5.
        timeout: seconds per call (each retry has its own).
        retry_backoff: seconds before the first retry of a call without ``Retry-After``;
            doubled at each further retry (with jitter), capped at 60; default 1.
        tool_choice: with tools offered, ``"auto"`` (the model decides), ``"none"`` (no
            tool call), ``"any"`` (it must call one of them, its pick) or the name of the
            tool it must call; ``generate`` sets it from ``TaskState.tool_choice``.
        reasoning_effort: how hard a reasoning model thinks (``"low"`` ... ``"high"``),
            sent to OpenAI-compatible servers as ``reasoning_effort``; other providers
            do not take it.
        reasoning_tokens: the most tokens a reasoning model may think with: Anthropic's
            extended thinking budget (``thinking.budget_tokens``); the chat-completions
            wire has no such field, so OpenAI-compatible servers are not sent it.
        reasoning_summary: the summary of its reasoning a model should give
            (``"concise"``, ``"detailed"``, ``"auto"``), Inspect's option for OpenAI's
            Responses API; the chat-completions and Messages wires have no such field,
            so it is accepted and not sent.
        response_schema: structured output (see ``ResponseSchema``).
        stop_seqs: Inspect's name for ``stop``; given, it becomes ``stop``.
        top_k: sample from the K likeliest tokens only (Anthropic; OpenAI-compatible
            servers such as vLLM and llama.cpp take it as ``top_k``).
        frequency_penalty: -2 to 2, penalises tokens by how often they appeared
            (OpenAI-compatible).
        presence_penalty: -2 to 2, penalises tokens that appeared at all (OpenAI-compatible).
        logit_bias: token id to a bias from -100 to 100 (OpenAI-compatible); ids given
            as ints (Inspect's ``{42: 10}``) are kept as text, as JSON spells them.
        num_choices: how many answers to generate (OpenAI-compatible ``n``); the first is
            ``output.message``, all are ``output.choices``.
        best_of: answers generated server-side, the likeliest returned (vLLM ``best_of``).
        parallel_tool_calls: whether the model may call several tools in one turn
            (OpenAI-compatible; Anthropic as ``disable_parallel_tool_use``).
        extra_body: more fields for the request body, sent as given (a server's own
            options, e.g. vLLM's ``chat_template_kwargs``); never a key.
        extra_headers: more HTTP headers for every request, on every provider (recorded
            in the spec, so never a credential: ``Authorization`` and the like are refused).
        cache_prompt: Anthropic prompt caching: ``True`` marks the system prompt, the
            tools and the last message ``cache_control: ephemeral``; ``"auto"`` (Inspect's
            default) does so when tools are offered. Other providers cache prefixes on
            their own and are not sent it.
        verbosity: how long an answer should be (``"low"``, ``"medium"``, ``"high"``),
            sent to OpenAI-compatible servers as ``verbosity`` (GPT-5); others refuse it.
        effort: how many tokens a model may spend on an answer (``"low"`` ... ``"max"``),
            sent to Anthropic as ``output_config.effort``; others refuse it.
        batch: Inspect's batch-API switch; assay sends each call on its own (every call
            is in the evidence as it happens), so anything but ``None``/``False`` is a
            ConfigError.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    seed: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    max_connections: int | None = None
    max_retries: int | None = None
    timeout: float | None = None
    retry_backoff: float | None = None
    tool_choice: str | None = None
    reasoning_effort: ReasoningEffort | None = None
    reasoning_tokens: int | None = None
    reasoning_summary: ReasoningSummary | None = None
    response_schema: ResponseSchema | None = None
    stop_seqs: list[str] | None = None
    top_k: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    logit_bias: dict[str, float] | None = None
    num_choices: int | None = None
    best_of: int | None = None
    parallel_tool_calls: bool | None = None
    extra_body: dict[str, Any] | None = None
    extra_headers: dict[str, str] | None = None
    cache_prompt: bool | Literal["auto"] | None = None
    verbosity: Verbosity | None = None
    effort: Effort | None = None
    batch: bool | int | dict[str, Any] | None = None

    def __post_init__(self) -> None:
        """``stop_seqs`` (Inspect's name) is kept as ``stop``: one field decides the
        stop strings, so a config reads and digests the same whichever name set them.
        Likewise ``logit_bias`` keys are kept as text whichever way they were given.
        ``batch`` and credential or malformed ``extra_headers`` are refused here, at once."""
        if self.batch is False:  # Inspect's "off": the same config as not setting it
            msgspec.structs.force_setattr(self, "batch", None)
        if self.batch is not None:
            raise ConfigError("model.batch", value=repr(self.batch))
        if self.extra_headers is not None:
            _check_headers(self.extra_headers)
        if self.logit_bias is not None and not all(isinstance(k, str) for k in self.logit_bias):
            bias = {str(k): float(v) for k, v in self.logit_bias.items()}
            msgspec.structs.force_setattr(self, "logit_bias", bias)
        if self.stop_seqs is not None:
            msgspec.structs.force_setattr(self, "stop", self.stop or self.stop_seqs)
            msgspec.structs.force_setattr(self, "stop_seqs", None)

    @staticmethod
    def from_settings(settings: dict[str, Any]) -> GenerateConfig:
        """*settings* (keyword arguments, ``-M`` values) checked into a GenerateConfig;
        ``msgspec.ValidationError`` names a wrong one. ``logit_bias`` may have int keys
        (Inspect's type), which a strict conversion would refuse."""
        bias = settings.get("logit_bias")
        if isinstance(bias, dict):
            settings = {**settings, "logit_bias": {str(k): v for k, v in bias.items()}}
        return msgspec.convert(settings, GenerateConfig)

    def merge(self, other: GenerateConfig | None) -> GenerateConfig:
        """This config with every field *other* sets taking precedence (*self* itself
        when *other* sets none: the common case, twice a call, compared in C)."""
        if other is None or other == _UNSET:
            return self
        updates = {f: v for f in other.__struct_fields__ if (v := getattr(other, f)) is not None}
        return msgspec.structs.replace(self, **updates) if updates else self  # frozen

    @property
    def deterministic(self) -> bool:
        """True when the provider should give the same answer every time (temperature 0)."""
        return self.temperature == 0


def _check_headers(headers: dict[str, str]) -> None:
    """A ConfigError for a header that carries a credential or cannot be sent."""
    for name, value in headers.items():
        if str(name).lower() in SECRET_HEADERS:
            raise ConfigError("model.extra_header_secret", header=name)
        text = f"{name}: {value}"
        if "\r" in text or "\n" in text or not name or ":" in str(name) or not text.isascii():
            raise ConfigError("model.header", model="extra_headers", header=name)


_UNSET = GenerateConfig()
"""A config that sets nothing (every field defaults to None)."""
