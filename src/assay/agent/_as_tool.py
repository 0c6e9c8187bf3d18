"""``as_tool(agent)``: an agent another agent (or ``generate()``) calls as a tool.

Inspect's idiom for a sub-agent that works on a question of its own rather than on the
caller's conversation (that is ``handoff()``): the model calls the tool with an
``input`` (and, for an ``@agent`` agent, the other parameters of its ``execute`` that
``as_tool`` did not fix), the agent works on that one user message with its own prompt
and tools until it answers, and the answer is the tool's result. It runs as a handoff
does, on the trial's state with its messages, tools and output swapped in and put back
afterwards, so its model calls are the trial's (limits, cache, evidence) and are
recorded under the tool's ``tool_call`` event; its conversation is kept in
``state.store["handoffs"]``, which ``assay show`` prints under the call.
"""

from __future__ import annotations

import functools
import inspect
import typing
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

INPUT = inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)


def as_tool(
    agent: Agent | AgentFunction, description: str | None = None, **agent_kwargs: Any
) -> Tool:
    """*agent* as a tool whose argument ``input`` is the message it works on.

    Args:
        agent: a ``react()`` or ``basic_agent()`` agent, or an ``@agent`` one.
        description: what the caller's model is told the tool does (default: the
            agent's description).
        **agent_kwargs: arguments of an ``@agent`` agent's ``execute`` beyond its state,
            fixed here; its other parameters are the tool's too, for the model to give.
    """
    if not isinstance(agent, Agent | AgentFunction):
        raise ConfigError("agent.as_tool_not_agent", value=repr(agent))
    if isinstance(agent, Agent):
        name = agent.name or agent.settings.agent
        if agent_kwargs:
            raise ConfigError("agent.as_tool_args", agent=name, names=", ".join(agent_kwargs))
        shown: list[inspect.Parameter] = []
    else:
        name, shown = agent.name, _shown_parameters(agent, agent_kwargs)
    told = description or agent.description or f"Ask {name} to work on the input."

    async def execute(input: str, **arguments: Any) -> str:
        state, generate = _running(name)
        sub = agent if isinstance(agent, Agent) else _bound(agent, {**agent_kwargs, **arguments})
        return await hand_over(sub, name, state, generate, [user_message(input)], "as_tool")

    execute.__signature__ = inspect.Signature([INPUT, *shown])  # type: ignore[attr-defined]
    execute.__annotations__ = {p.name: p.annotation for p in [INPUT, *shown]}
    execute.__doc__ = _docstring(agent, shown)
    return define_tool(execute, name, told)


def _shown_parameters(agent: AgentFunction, fixed: dict[str, Any]) -> list[inspect.Parameter]:
    """The parameters of *agent*'s ``execute`` after its state that *fixed* leaves to the
    model, keyword-only, with their hints resolved where the agent was written."""
    parameters = list(inspect.signature(agent.execute).parameters.values())[1:]
    unknown = sorted(set(fixed) - {p.name for p in parameters})
    if unknown:
        raise ConfigError("agent.as_tool_args", agent=agent.name, names=", ".join(unknown))
    try:
        hints = typing.get_type_hints(agent.execute)
    except Exception:  # a hint naming a local type: define_tool says which, in one line
        hints = {}
    return [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation))
        for p in parameters
        if p.name not in fixed
    ]


def _docstring(agent: Agent | AgentFunction, shown: list[inspect.Parameter]) -> str:
    """The tool function's docstring: ``input`` and the shown parameters described as
    the agent's ``execute`` describes them."""
    described: dict[str, str] = {}
    text = inspect.getdoc(agent.execute) if isinstance(agent, AgentFunction) else None
    if text and shown:
        import docstring_parser  # only when such an agent is made a tool

        described = {p.arg_name: p.description or "" for p in docstring_parser.parse(text).params}
    lines = ["Run the agent.", "", "Args:", "    input: Input message."]
    lines += [f"    {p.name}: {described[p.name]}" for p in shown if described.get(p.name)]
    return "\n".join(lines)


def _bound(agent: AgentFunction, arguments: dict[str, Any]) -> AgentFunction:
    """*agent* with *arguments* given to its ``execute`` after the state."""
    if not arguments:
        return agent
    execute = functools.partial(agent.execute, **arguments)
    return AgentFunction(execute, agent.name, agent.description)


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
