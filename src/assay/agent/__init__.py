"""Agents: ``react()``, ``basic_agent()``, ``handoff()``, ``as_tool()``: Inspect's semantics.

An agent is a solver that works in a loop: it asks the model, runs the tools the model
calls, and stops when the model calls its ``submit`` tool (see ``_loop``). With more
than one attempt the task's own scorer judges each answer before the last. See
docs/agents.md.
"""

from assay.agent._as_tool import as_tool
from assay.agent._basic import basic_agent
from assay.agent._function import AgentFunction, AgentState, agent, as_solver, run
from assay.agent._handoff import handoff
from assay.agent._react import Agent, react
from assay.agent._settings import AgentAttempts, AgentPrompt, AgentSubmit

__all__ = [
    "Agent",
    "AgentAttempts",
    "AgentFunction",
    "AgentPrompt",
    "AgentState",
    "AgentSubmit",
    "agent",
    "as_solver",
    "as_tool",
    "basic_agent",
    "handoff",
    "react",
    "run",
]
