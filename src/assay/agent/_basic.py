"""``basic_agent()``: Inspect's older agent solver, on the loop react() uses.

It differs from react() where Inspect's does: an ``init`` solver (by default a system
message naming the submit tool) instead of a prompt, a continue message after every
answer without a tool call (it never stops on its own), and a message limit of 50 when
neither the agent nor the task sets one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from assay.agent._loop import LoopSettings, check_tools, run_loop
from assay.agent._settings import (
    DEFAULT_INCORRECT_MESSAGE,
    DEFAULT_SUBMIT_DESCRIPTION,
    AgentAttempts,
    IncorrectMessage,
    check_count,
)
from assay.model import current_budget
from assay.solver import Generate, Solver, TaskState, Tool, chain, solver, system_message

DEFAULT_SYSTEM_MESSAGE = (
    "You are a capable assistant working towards the correct answer. Functions are "
    "available to you; call one per message and its result comes back right after. Take "
    "as many steps as you need. Before acting, reason briefly about which functions you "
    "will call and why.\n\nOnce you have finished the task and have your answer, call "
    "the {submit}() function with it."
)
DEFAULT_BASIC_CONTINUE = "Please carry on with the next step as you judge best."
DEFAULT_MESSAGE_LIMIT = 50
"""The message limit of a basic_agent whose task sets none (Inspect's default)."""


@solver
def basic_agent(
    init: Solver | Sequence[Solver] | None = None,
    tools: Sequence[Tool] | None = None,
    max_attempts: int = 1,
    message_limit: int | None = None,
    token_limit: int | None = None,
    incorrect_message: IncorrectMessage = DEFAULT_INCORRECT_MESSAGE,
    continue_message: str = DEFAULT_BASIC_CONTINUE,
    submit_name: str = "submit",
    submit_description: str = DEFAULT_SUBMIT_DESCRIPTION,
) -> Solver:
    """An agent that works with *tools* until it submits an answer, as a solver.

    Args:
        init: solvers run first (default: a system message asking for the submit tool).
        tools: the ``@tool`` functions (and ``handoff()`` tools) the model may call.
        max_attempts: how many answers it may submit; all but the last are judged by
            the task's first scorer, and a wrong one is answered with *incorrect_message*.
        message_limit: the most messages in the conversation (default: the task's, or 50).
        token_limit: the most tokens the agent's model calls may use.
        incorrect_message: text, or ``(state, scores) -> text``, after a wrong answer.
        continue_message: sent whenever the model answers without calling a tool.
        submit_name: the submit tool's name.
        submit_description: the submit tool's description.
    """
    label = "basic_agent"
    for name, value in (("message_limit", message_limit), ("token_limit", token_limit)):
        if value is not None:
            check_count(label, name, value)
    settings = LoopSettings(
        agent=label,
        tools=check_tools(label, tools, submit_name),
        submit_name=submit_name,
        submit_description=submit_description,
        attempts=AgentAttempts(_checked_attempts(max_attempts), incorrect_message),
        continue_message=continue_message,
        on_continue=continue_message,
        message_limit=message_limit,
        token_limit=token_limit,
    )
    default_init = system_message(DEFAULT_SYSTEM_MESSAGE, submit=submit_name)
    setup = chain(init if init is not None else default_init)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await setup(state, generate)
        run = dataclasses.replace(settings, message_limit=_message_limit(message_limit))
        return await run_loop(state, generate, run)

    return solve


def _checked_attempts(max_attempts: int) -> int:
    check_count("basic_agent", "attempts", max_attempts)
    return max_attempts


def _message_limit(given: int | None) -> int | None:
    """The agent's own limit: as given; else none when the task has one (``generate``
    keeps it), else the default."""
    if given is not None:
        return given
    budget = current_budget()
    if budget is not None and budget.limits.message_limit is not None:
        return None
    return DEFAULT_MESSAGE_LIMIT
