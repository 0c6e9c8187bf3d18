"""``as_tool(agent)``: an agent another agent (or ``generate()``) calls as a tool.

Inspect's idiom for a sub-agent that works on a question of its own rather than on the
caller's conversation (that is ``handoff()``): the model calls the tool with an
``input``, the agent works on that one user message with its own prompt and tools until
it answers, and the answer is the tool's result. It runs as a handoff does, on the
trial's state with its messages, tools and output swapped in and put back afterwards,
so its model calls are the trial's (limits, cache, evidence) and are recorded under the
tool's ``tool_call`` event; its conversation is kept in ``state.store["handoffs"]``,
which ``assay show`` prints under the call.
"""

from __future__ import annotations

import functools
from typing import Any

from assay.agent._function import AgentFunction
from assay.agent._handoff import hand_over
from assay.agent._loop import current_run
from assay.agent._react import Agent
from assay.errors import ConfigError
from assay.model import user_message
from assay.solver import Generate, TaskState, Tool, ToolError
from assay.solver._solver import current_generate
from assay.solver._state import current_state
from assay.solver._tools import define_tool


def as_tool(
    agent: Agent | AgentFunction, description: str | None = None, **agent_kwargs: Any
) -> Tool:
    """*agent* as a tool whose one argument, ``input``, is the message it works on.

    Args:
        agent: a ``react()`` or ``basic_agent()`` agent, or an ``@agent`` one.
        description: what the caller's model is told the tool does (default: the
            agent's description).
        **agent_kwargs: arguments of an ``@agent`` agent's ``execute`` beyond its state,
            fixed here (the model is not shown them).
    """
    if not isinstance(agent, Agent | AgentFunction):
        raise ConfigError("agent.as_tool_not_agent", value=repr(agent))
    name = agent.name or agent.settings.agent if isinstance(agent, Agent) else agent.name
    if agent_kwargs:
        if not isinstance(agent, AgentFunction):
            raise ConfigError("agent.as_tool_args", agent=name, names=", ".join(agent_kwargs))
        fixed = functools.partial(agent.execute, **agent_kwargs)
        agent = AgentFunction(fixed, agent.name, agent.description)
    told = description or agent.description or f"Ask {name} to work on the input."
    sub = agent

    async def execute(input: str) -> str:
        """Run the agent.

        Args:
            input: Input message.
        """
        state, generate = _running(name)
        return await hand_over(sub, name, state, generate, [user_message(input)])

    return define_tool(execute, name, told)


def _running(name: str) -> tuple[TaskState, Generate]:
    """The state and ``generate`` the tool's call works in: the running agent's, else
    the trial's solver chain's (a ``generate()`` step's tool call)."""
    run = current_run()
    if run is not None:
        return run.state, run.generate
    state = current_state()
    try:
        generate = current_generate()
    except RuntimeError:
        state = None
    if state is None:
        raise ToolError(f"{name} can only be called during a trial's solvers")
    return state, generate
