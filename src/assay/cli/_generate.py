"""``run``'s generation options, named as Inspect's ``eval`` names them.

Each sets one GenerateConfig field for every model of the run, over the task's own
config, and is recorded so ``resume`` applies it again. The options do not reach the
command's function as arguments: each one given is collected into ``ctx.meta`` under
``GENERATE_KEY``, so adding one is one declaration here, not a parameter threaded
through ``run``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from assay.model import EFFORTS, REASONING_EFFORTS, REASONING_SUMMARIES, VERBOSITIES

F = TypeVar("F", bound=Callable[..., Any])

GENERATE_KEY = "assay.generate"
"""Where the generation options given are kept in ``click.Context.meta``."""


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a given option's value under its GenerateConfig name."""
    if value is not None and param.name is not None:
        ctx.meta.setdefault(GENERATE_KEY, {})[param.name] = value
    return value


def _flag(ctx: click.Context, param: click.Parameter, value: bool | None) -> Any:
    """A flag counts only when given: absent, the task's own config decides."""
    return _keep(ctx, param, True) if value else value


def _logit_bias(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--logit-bias 42=10,43=-10`` as ``{"42": 10.0, "43": -10.0}``."""
    if value is None:
        return None
    bias: dict[str, float] = {}
    for pair in value.split(","):
        token, sep, amount = pair.strip().partition("=")
        try:
            bias[str(int(token))] = float(amount)
        except ValueError:
            sep = ""
        if not sep:
            raise click.BadParameter(f"{pair!r} is not TOKEN_ID=BIAS (e.g. 42=10,43=-10)")
    return _keep(ctx, param, bias)


def _stop_seqs(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--stop-seqs a,b`` as ``stop=["a", "b"]``."""
    if value is None:
        return None
    ctx.meta.setdefault(GENERATE_KEY, {})["stop"] = [s for s in value.split(",") if s]
    return value


def _extra_body(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--extra-body '{"chat_template_kwargs": {...}}'``: a JSON object."""
    if value is None:
        return None
    try:
        body = json.loads(value)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise click.BadParameter('not a JSON object (e.g. {"top_k": 20})')
    return _keep(ctx, param, body)


def _cache_prompt(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--cache-prompt auto|true|false`` as ``"auto"``, ``True`` or ``False``."""
    if value is None:
        return None
    return _keep(ctx, param, value if value == "auto" else value == "true")


def _option(*decls: str, **attrs: Any) -> Callable[[F], F]:
    attrs.setdefault("callback", _keep)
    return click.option(*decls, expose_value=False, **attrs)


GENERATE_OPTIONS = [
    _option("--temperature", type=float, help="Sampling temperature."),
    _option("--top-p", type=float, help="Nucleus sampling mass."),
    _option("--top-k", type=click.IntRange(1), help="Sample from the K likeliest tokens only."),
    _option("--max-tokens", type=click.IntRange(1), help="Cap on output tokens."),
    _option("--seed", type=int, help="Sampling seed, where the provider takes one."),
    _option("--stop-seqs", callback=_stop_seqs, help="Strings that end generation: a,b."),
    _option("--frequency-penalty", type=float, help="-2 to 2 (OpenAI-compatible)."),
    _option("--presence-penalty", type=float, help="-2 to 2 (OpenAI-compatible)."),
    _option("--logit-bias", callback=_logit_bias, help="Token biases: 42=10,43=-10."),
    _option("--num-choices", type=click.IntRange(1), help="Answers per call (OpenAI's n)."),
    _option("--best-of", type=click.IntRange(1), help="Answers made server-side (vLLM)."),
    _option("--logprobs", is_flag=True, callback=_flag, help="Return tokens' log probabilities."),
    _option("--top-logprobs", type=click.IntRange(0), help="Likeliest tokens at each position."),
    _option(
        "--parallel-tool-calls/--no-parallel-tool-calls",
        default=None,
        help="Whether several tools may be called in one turn.",
    ),
    _option("--extra-body", callback=_extra_body, help="More request fields, a JSON object."),
    _option(
        "--reasoning-effort",
        type=click.Choice(REASONING_EFFORTS),
        help="Reasoning effort, for reasoning models that take one (OpenAI-compatible).",
    ),
    _option(
        "--reasoning-tokens",
        type=click.IntRange(1),
        help="Most tokens a reasoning model may think with (Anthropic's thinking budget).",
    ),
    _option(
        "--verbosity",
        type=click.Choice(VERBOSITIES),
        help="How long answers should be (OpenAI-compatible, GPT-5).",
    ),
    _option(
        "--effort",
        type=click.Choice(EFFORTS),
        help="Tokens a model may spend on an answer (Anthropic's output_config.effort).",
    ),
    _option(
        "--cache-prompt",
        type=click.Choice(["auto", "true", "false"]),
        callback=_cache_prompt,
        help="Anthropic prompt caching: auto (when tools are offered), true or false.",
    ),
    _option(
        "--batch",
        is_flag=True,
        callback=_flag,
        help="Inspect's batch APIs: refused (each call is sent and recorded on its own).",
    ),
    _option(
        "--reasoning-summary",
        type=click.Choice(REASONING_SUMMARIES),
        help="Summary of its reasoning a model should give (Inspect's option).",
    ),
]

GENERATE_NAMES = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "seed",
    "stop_seqs",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "num_choices",
    "best_of",
    "logprobs",
    "top_logprobs",
    "parallel_tool_calls",
    "extra_body",
    "reasoning_effort",
    "reasoning_tokens",
    "reasoning_summary",
    "verbosity",
    "effort",
    "cache_prompt",
    "batch",
)
"""The options' parameter names (for refusing them on a YAML spec)."""


def generate_options(func: F) -> F:
    """Declare the generation options on a command."""
    for option in reversed(GENERATE_OPTIONS):
        func = option(func)
    return func


def given_settings(ctx: click.Context) -> dict[str, Any]:
    """The generation options given, by GenerateConfig field."""
    return dict(ctx.meta.get(GENERATE_KEY, {}))
