"""Solvers: TaskState, the solver protocol, chains, tools and the built-in solvers."""

from assay.solver._adapters import as_completion_fn, from_completion_fn, postprocess
from assay.solver._builtin import (
    assistant_message,
    chain_of_thought,
    generate,
    prompt_template,
    self_critique,
    system_message,
    use_tools,
    user_message,
)
from assay.solver._fork import fork
from assay.solver._generate import ToolCalls, generate_loop
from assay.solver._judge import task_scorers, task_scorers_scope
from assay.solver._multiple_choice import letters, multiple_choice, parse_answer
from assay.solver._solver import Chain, Generate, Solver, chain, fresh_solver, solver
from assay.solver._state import Choice, Target, TaskState
from assay.solver._tool_calls import call_tools
from assay.solver._tool_def import ToolDef
from assay.solver._tools import Tool, ToolError, ToolInfo, tool

Choices = list[Choice]
"""Inspect's name for ``state.choices``: the sample's choices, in the order shown."""

__all__ = [
    "Chain",
    "Choice",
    "Choices",
    "Generate",
    "Solver",
    "Target",
    "TaskState",
    "Tool",
    "ToolCalls",
    "ToolDef",
    "ToolError",
    "ToolInfo",
    "as_completion_fn",
    "assistant_message",
    "call_tools",
    "chain",
    "chain_of_thought",
    "fork",
    "fresh_solver",
    "from_completion_fn",
    "generate",
    "generate_loop",
    "letters",
    "multiple_choice",
    "parse_answer",
    "postprocess",
    "prompt_template",
    "self_critique",
    "solver",
    "system_message",
    "task_scorers",
    "task_scorers_scope",
    "tool",
    "use_tools",
    "user_message",
]


def __getattr__(name: str) -> object:
    """``basic_agent``, which Inspect exports from here; assay's lives with the agents,
    which import this package, so it is found on first use."""
    if name == "basic_agent":
        from assay.agent import basic_agent

        return basic_agent
    raise AttributeError(f"module 'assay.solver' has no attribute {name!r}")
