"""Seed 003's two layers, joined both ways, and output postprocessors.

``from_completion_fn`` makes a solver out of a plain "prompt in, completions out"
function; ``as_completion_fn`` makes such a function out of a solver and a model, so a
solver can stand wherever a callable target is expected. ``postprocess`` rewrites a
solver's output through functions, recording each step as a ``postprocessor`` event.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from assay.evidence import current_recorder
from assay.model import GenerateConfig, Model, ModelOutput, get_model
from assay.solver._generate import ToolCalls, generate_loop
from assay.solver._solver import Generate, Solver, fresh_solver
from assay.solver._state import Target, TaskState

CompletionFn = Callable[[str], Any]


def from_completion_fn(function: CompletionFn, name: str = "completion_fn") -> Solver:
    """A solver whose answer is ``function(prompt)`` (text, list of texts, or awaitable)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        result = function(state.user_prompt.text)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "get_completions"):
            result = list(result.get_completions())
        text = result[0] if isinstance(result, list) and result else str(result)
        state.output = ModelOutput.from_content(name, str(text))
        state.messages.append(state.output.message)
        return state

    return solve


def as_completion_fn(step: Solver, model: str | Model) -> Callable[[str], Awaitable[list[str]]]:
    """A "prompt in, completions out" function that runs *step* with *model*."""
    resolved = get_model(model)

    async def complete(prompt: str) -> list[str]:
        state = TaskState(
            model=resolved.name, sample_id=0, epoch=1, input=prompt, target=Target("")
        )

        async def generate(
            state: TaskState, tool_calls: ToolCalls = "loop", **config: Any
        ) -> TaskState:
            merged = GenerateConfig(**config) if config else None
            return await generate_loop(state, resolved, merged, tool_calls)

        state = await fresh_solver(step)(state, generate)
        return [state.output.completion]

    return complete


def postprocess(step: Solver, *functions: Callable[[str], str]) -> Solver:
    """Run *step*, then rewrite its completion through each function in turn."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await step(state, generate)
        for function in functions:
            before = state.output.completion
            after = function(before)
            state.output.message.text = after
            recorder = current_recorder()
            if recorder is not None:
                recorder.record_if_open(
                    "postprocessor",
                    {
                        "name": getattr(function, "__name__", repr(function)),
                        "before": before,
                        "after": after,
                    },
                )
        return state

    return solve
