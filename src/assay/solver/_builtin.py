"""The built-in solvers: generate, tools, messages, templates, chain of thought,
self-critique."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from assay._registry import recorded_when_given
from assay.errors import ConfigError
from assay.model import (
    TOOL_CHOICES,
    ChatMessage,
    Model,
    ResponseCache,
    cache_scope,
    current_cache,
    get_model,
)
from assay.model import assistant_message as assistant_msg
from assay.model import system_message as system_msg
from assay.model import user_message as user_msg
from assay.solver._generate import ToolCalls, check_tool_calls
from assay.solver._solver import Generate, Solver, plain_generate, solver, stateless
from assay.solver._state import TaskState
from assay.solver._tool_def import ToolDef
from assay.solver._tools import Tool


def render(template: str, state: TaskState, params: dict[str, Any]) -> str:
    """Fill *template* from the state: ``{prompt}``, metadata keys and *params*."""
    values = {**state.metadata, **params, "prompt": state.user_prompt.text}
    return fill_template(template, values)


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(![rsa])?(:[^{}]*)?\}")
"""``{name}``, ``{name!r}``, ``{name:>10}``: what ``str.format`` would fill by name; and
the ``{{`` and ``}}`` it would turn into single braces."""


_CONVERSIONS: dict[str, Callable[[object], str]] = {"!r": repr, "!s": str, "!a": ascii}


def fill_template(template: str, values: dict[str, Any]) -> str:
    """Substitute the ``{name}`` placeholders *values* knows; leave every other brace as
    written. Prompts quote flags (``picoCTF{...}``), JSON examples and code, whose
    braces ``str.format`` would take for fields and fail on; as in Inspect, only known
    names are filled, so such text reaches the model unchanged.

    ``{{`` becomes ``{`` as ``str.format`` (and so Inspect) makes it, and a ``}}`` closing
    one becomes ``}``; a ``}}`` that closes no ``{{`` is left whole, so the end of a
    nested JSON example (``{"a": {"b": 1}}``) is not cut."""
    open_doubles = 0

    def fill(found: re.Match[str]) -> str:
        nonlocal open_doubles
        token = found.group(0)
        if token == "{{":
            open_doubles += 1
            return "{"
        if token == "}}":
            if not open_doubles:
                return token
            open_doubles -= 1
            return "}"
        name, conversion, spec = found.groups()
        if name not in values:
            return found.group(0)
        value = values[name]
        if conversion:
            value = _CONVERSIONS[conversion](value)
        return format(value, spec[1:] if spec else "")

    return _PLACEHOLDER.sub(fill, template)


@solver
@recorded_when_given("cache")
def generate(tool_calls: ToolCalls = "loop", cache: bool = False, **config: Any) -> Solver:
    """Ask the model, with optional generation settings for this step; with tools in the
    state, run the ones it calls and ask again (``tool_calls``: ``"loop"`` until it
    answers without a call, ``"single"`` one round, ``"none"`` none). ``cache=True``
    answers this step's calls from the response cache (and fills it) even when the eval
    was not run with ``cache=True``, as Inspect's ``generate(cache=True)``."""
    check_tool_calls(tool_calls)
    if not isinstance(cache, bool):
        raise ConfigError(
            "task.option", option="generate(cache=...)", reason="True or False (no CachePolicy)"
        )

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not cache or current_cache() is not None:
            return await generate(state, tool_calls=tool_calls, **config)
        with cache_scope(ResponseCache().open()):
            return await generate(state, tool_calls=tool_calls, **config)

    stateless(solve)
    return plain_generate(solve) if not cache and not config else solve


@solver
def use_tools(
    *tools: Tool | Sequence[Tool], tool_choice: Any = "auto", append: bool = False
) -> Solver:
    """Offer *tools* (made with ``@tool``) to the model in the ``generate`` calls after
    this step, replacing the state's tools (or adding to them, with ``append``).

    ``tool_choice``: ``"auto"`` (the model decides), ``"none"`` (it may not call one),
    ``"any"`` (it must call one first, its pick) or the name of a tool to call first
    (or Inspect's ``ToolFunction(name=...)``).
    """
    given = _flat_tools(tools)
    tool_choice = getattr(tool_choice, "name", tool_choice)  # a ToolFunction: its name

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = [*state.tools, *given] if append else list(given)
        _check_tools(chosen, tool_choice)
        state.tools = chosen
        state.tool_choice = tool_choice
        return state

    _check_tools(given, tool_choice if not append else "auto")
    return solve


def _flat_tools(tools: Sequence[Tool | Sequence[Tool]]) -> list[Tool]:
    """The tools, lists flattened; a ConfigError for anything that is not a Tool."""
    flat: list[Tool] = []
    for item in tools:
        for given in item if isinstance(item, list | tuple) else [item]:
            one = given.as_tool() if isinstance(given, ToolDef) else given
            if getattr(one, "__assay_kind__", None) == "tool":
                raise ConfigError(
                    "tool.factory_not_called", name=getattr(one, "__assay_name__", "?")
                )
            if not isinstance(one, Tool):
                raise ConfigError("tool.not_a_tool", value=repr(one))
            flat.append(one)
    return flat


def _check_tools(tools: list[Tool], tool_choice: str) -> None:
    """No two tools of one name; a ``tool_choice`` naming a tool names one of them."""
    names = [t.name for t in tools]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError("tool.duplicate", name=name)
    if tool_choice not in TOOL_CHOICES and tool_choice not in names:
        raise ConfigError("tool.unknown_choice", choice=tool_choice, tools=", ".join(names))


@solver
def system_message(template: str, **params: Any) -> Solver:
    """Put a system message (rendered from *template*) before the conversation."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        message = system_msg(render(template, state, params))
        index = sum(1 for m in state.messages if m.role == "system")
        state.messages.insert(index, message)
        return state

    return stateless(solve)


@solver
def user_message(template: str, **params: Any) -> Solver:
    """Append a user message rendered from *template*."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.append(user_msg(render(template, state, params)))
        return state

    return stateless(solve)


@solver
def assistant_message(template: str, **params: Any) -> Solver:
    """Append an assistant message rendered from *template* (Inspect's solver: a turn
    the model is shown as its own, e.g. a worked example)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.append(assistant_msg(render(template, state, params)))
        return state

    return solve


@solver
def prompt_template(template: str, **params: Any) -> Solver:
    """Rewrite the user prompt through *template* (``{prompt}`` is the original)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        prompt = state.user_prompt
        prompt.text = render(template, state, params)
        return state

    return stateless(solve)


CHAIN_OF_THOUGHT = """{prompt}

Before answering, reason step by step. Then give your final answer on its own last line
in the form "ANSWER: $ANSWER"."""


@solver
def chain_of_thought(template: str = CHAIN_OF_THOUGHT) -> Solver:
    """Ask for step-by-step reasoning before the answer."""
    step: Solver = prompt_template(template)
    return step


CRITIQUE = """Given the question and answer below, critique the answer. If it is fully
correct, say so; otherwise say what is wrong.

[BEGIN DATA]
[Question]: {question}
[Answer]: {completion}
[END DATA]

Critique: """

IMPROVE = """Given the question, the answer and a critique of it, write an improved answer.
If the critique finds nothing to improve, repeat the original answer.

[BEGIN DATA]
[Question]: {question}
[Answer]: {completion}
[Critique]: {critique}
[END DATA]

Improved answer: """


@solver
def self_critique(
    critique_template: str = CRITIQUE, completion_template: str = IMPROVE, model: str | None = None
) -> Solver:
    """Have a model critique the current answer, then answer again in its light."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        critic: Model = get_model(model) if model else get_model(state.model)
        values = {"question": state.input_text, "completion": state.output.completion}
        critique = await critic.generate(render(critique_template, state, values))
        improve = render(completion_template, state, {**values, "critique": critique.completion})
        state.messages.append(user_msg(improve))
        return await generate(state)

    return solve


def messages_text(messages: list[ChatMessage]) -> str:
    """A transcript of *messages* as plain text."""
    return "\n".join(f"{m.role}: {m.text}" for m in messages)
