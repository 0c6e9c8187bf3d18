"""``react()``: a ReAct agent with a submit tool, as a solver (Inspect's semantics).

The agent puts its system prompt first, offers its tools and a ``submit(answer)`` tool,
and runs the shared loop (see ``_loop``) until an answer is submitted and accepted. It is
a solver (``Task(solver=react(...))``) and, named, a sub-agent for ``handoff()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.agent._loop import LoopSettings, OnContinue, check_tools, run_loop
from assay.agent._settings import (
    DEFAULT_CONTINUE_MESSAGE,
    DEFAULT_SUBMIT_DESCRIPTION,
    AgentAttempts,
    AgentPrompt,
    AgentSubmit,
    as_attempts,
    check_count,
)
from assay.model import system_message
from assay.solver import Generate, TaskState, Tool, solver


class Agent:
    """A configured agent: a solver, and something ``handoff()`` can hand work to.

    It keeps no state between runs (each run's submit tool and answers are its own), so
    one agent serves every trial and every handoff.
    """

    def __init__(
        self,
        name: str | None,
        description: str | None,
        prompt: AgentPrompt | None,
        settings: LoopSettings,
    ) -> None:
        self.name = name
        self.description = description
        self.prompt = prompt
        self.settings = settings

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        """Run the agent on *state* (the solver protocol)."""
        if self.prompt is not None:
            text = self.prompt.render(self.settings.submit_name)
            if text:
                state.messages.insert(0, system_message(text))
        return await run_loop(state, generate, self.settings)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r})"


@solver
def react(
    name: str | None = None,
    description: str | None = None,
    prompt: str | AgentPrompt | None = None,
    tools: Sequence[Tool] | None = None,
    attempts: int | AgentAttempts = 1,
    submit: AgentSubmit | bool | None = None,
    on_continue: str | OnContinue | None = None,
    message_limit: int | None = None,
    token_limit: int | None = None,
) -> Agent:
    """A ReAct agent: tools and a submit tool, in a loop until it submits an answer.

    Args:
        name: the agent's name (needed by ``handoff()``, which calls it ``transfer_to_<name>``).
        description: what the agent does (a handoff tool's description).
        prompt: the system prompt: text (the task's instructions, before the default
            prompt), an ``AgentPrompt`` for every part, or ``None`` for the default one.
        tools: the ``@tool`` functions (and ``handoff()`` tools) the model may call.
        attempts: how many answers it may submit; all but the last are judged by the
            task's first scorer, and a wrong one is answered with the incorrect message.
        submit: an ``AgentSubmit`` (name, description); ``False`` for no submit tool
            (the loop then ends when the model answers without calling a tool).
        on_continue: after an answer with no tool call: a message to send, or a function
            ``(state) -> True | False | message`` (``False`` ends the loop).
        message_limit: the most messages the conversation may hold while the agent works.
        token_limit: the most tokens the agent's own model calls may use.
    """
    label = f"react({name})" if name else "react"
    chosen = _submit_of(submit)
    for limit_name, limit in (("message_limit", message_limit), ("token_limit", token_limit)):
        if limit is not None:
            check_count(label, limit_name, limit)
    settings = LoopSettings(
        agent=name or "react",
        tools=check_tools(label, tools, chosen.name if chosen else None),
        submit_name=chosen.name if chosen else None,
        submit_description=chosen.description if chosen else DEFAULT_SUBMIT_DESCRIPTION,
        attempts=_attempts_of(label, attempts),
        continue_message=DEFAULT_CONTINUE_MESSAGE.replace(
            "{submit}", chosen.name if chosen else "submit"
        ),
        on_continue=on_continue,
        message_limit=message_limit,
        token_limit=token_limit,
    )
    return Agent(name, description, _prompt_of(prompt), settings)


def _submit_of(submit: AgentSubmit | bool | None) -> AgentSubmit | None:
    if submit is None or submit is True:
        return AgentSubmit()
    if submit is False:
        return None
    return submit


def _prompt_of(prompt: str | AgentPrompt | None) -> AgentPrompt:
    if isinstance(prompt, AgentPrompt):
        return prompt
    return AgentPrompt(instructions=prompt)


def _attempts_of(label: str, attempts: Any) -> AgentAttempts:
    if not isinstance(attempts, AgentAttempts):
        check_count(label, "attempts", attempts)
    return as_attempts(attempts)
