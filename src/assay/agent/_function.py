"""``@agent``, ``AgentState``, ``as_solver`` and ``run``: Inspect's own-written agents.

An Inspect agent is ``async (AgentState) -> AgentState`` over the conversation. Made by
an ``@agent`` factory it is also a solver (``Task(solver=my_agent())``: it works on the
trial's messages and sets its output) and a sub-agent for ``handoff()``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from assay._registry import registered
from assay.model import ChatMessage, ModelOutput, user_message
from assay.solver import Generate, Solver, TaskState

F = TypeVar("F", bound=Callable[..., Any])


class AgentState:
    """The conversation an agent works on, and its ``output`` (the last answer)."""

    def __init__(self, *, messages: Sequence[ChatMessage]) -> None:
        self.messages: list[ChatMessage] = list(messages)
        self._output: ModelOutput | None = None

    @property
    def output(self) -> ModelOutput:
        """The last answer set, else the last assistant message as one."""
        if self._output is not None:
            return self._output
        answers = [m for m in self.messages if m.role == "assistant"]
        output = ModelOutput.empty()
        if answers:
            output.message = answers[-1]
        return output

    @output.setter
    def output(self, output: ModelOutput) -> None:
        self._output = output


AgentFn = Callable[[AgentState], Awaitable[AgentState]]


class AgentFunction:
    """An ``@agent`` factory's product: the agent, usable as a solver too."""

    def __init__(self, execute: AgentFn, name: str, description: str | None) -> None:
        self.execute = execute
        self.name = name
        self.description = description
        functools.update_wrapper(self, execute)

    async def __call__(self, state: Any, generate: Generate | None = None) -> Any:
        """An ``AgentState`` → the agent's state; a ``TaskState`` (the solver protocol)
        → the trial's state with the agent's messages and output."""
        if not isinstance(state, TaskState):
            return await self.execute(state)
        ended = await self.execute(AgentState(messages=state.messages))
        state.messages = ended.messages
        if ended.output.message.content or ended.output.message.tool_calls:
            state.output = ended.output
        return state

    def __repr__(self) -> str:
        return f"AgentFunction(name={self.name!r})"


def agent(
    factory: F | None = None, *, name: str | None = None, description: str | None = None
) -> Any:
    """Register an agent factory: ``@agent`` or ``@agent(name=..., description=...)``.

    The factory returns ``async (AgentState) -> AgentState``; calling the decorated
    factory gives an agent that is also a solver, recorded in the spec as one.
    """

    def decorate(made_by: F) -> F:
        label = name or made_by.__name__

        @functools.wraps(made_by)
        def make(*args: Any, **kwargs: Any) -> AgentFunction:
            made = made_by(*args, **kwargs)
            if isinstance(made, AgentFunction):
                return made
            return AgentFunction(made, label, description or made_by.__doc__)

        decorated: F = registered("solver", label)(make)  # type: ignore[assignment]
        return decorated

    return decorate(factory) if factory is not None else decorate


def as_solver(agent: Any) -> Solver:
    """*agent* as a solver. assay's agents (``react()``, ``@agent`` ones) are solvers
    already, so it is *agent* itself."""
    solver: Solver = agent
    return solver


async def run(agent: AgentFunction, input: str | list[ChatMessage] | AgentState) -> AgentState:
    """Run an ``@agent`` agent on *input* (text, messages or a state) and return its
    state (``react()`` agents run as solvers or through ``handoff()``)."""
    if isinstance(input, AgentState):
        state = input
    else:
        messages = [user_message(input)] if isinstance(input, str) else list(input)
        state = AgentState(messages=messages)
    return await agent.execute(state)
