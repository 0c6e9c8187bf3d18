"""Solvers: TaskState, the solver protocol, chains and the built-in solvers."""

from assay.solver._adapters import as_completion_fn, from_completion_fn, postprocess
from assay.solver._builtin import (
    chain_of_thought,
    generate,
    prompt_template,
    self_critique,
    system_message,
    user_message,
)
from assay.solver._multiple_choice import letters, multiple_choice, parse_answer
from assay.solver._solver import Chain, Generate, Solver, chain, fresh_solver, solver
from assay.solver._state import Choice, Target, TaskState

__all__ = [
    "Chain",
    "Choice",
    "Generate",
    "Solver",
    "Target",
    "TaskState",
    "as_completion_fn",
    "chain",
    "chain_of_thought",
    "fresh_solver",
    "from_completion_fn",
    "generate",
    "letters",
    "multiple_choice",
    "parse_answer",
    "postprocess",
    "prompt_template",
    "self_critique",
    "solver",
    "system_message",
    "user_message",
]
