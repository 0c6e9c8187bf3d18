"""``handoff(agent)``: a tool that hands the conversation to a sub-agent.

Called by the model of a running agent (react() or basic_agent()), the tool gives the
sub-agent the conversation so far as text (the caller's system prompt, tool calls and
tool results are left out: they belong to tools the sub-agent does not have), lets it
work with its own prompt and tools until it submits, and answers the caller with the
sub-agent's answer. The sub-agent works on the caller's state object with its own
messages and tools swapped in, and the caller's are put back afterwards, also when a
limit cuts the sub-agent short; so the trial's recorded state is always the caller's.

What the sub-agent said and did is kept: its model calls and tool calls are events
under the handoff's own ``tool_call`` event, and its whole conversation is appended to
``state.store["handoffs"]`` (agent, tool, how, answer, messages), which ``assay show`` prints.
"""

from __future__ import annotations

from typing import Any

import msgspec

from assay.agent._function import AgentFunction
from assay.agent._loop import current_run, handoff_unavailable
from assay.agent._react import Agent
from assay.errors import ConfigError
from assay.model import ChatMessage, ModelOutput, assistant_message
from assay.solver import TaskState, Tool
from assay.solver._tools import define_tool

HANDOFFS = "handoffs"
"""The ``state.store`` key the sub-agents' conversations are kept under."""


def handoff(
    agent: Agent | AgentFunction, description: str | None = None, tool_name: str | None = None
) -> Tool:
    """A tool that hands the conversation to *agent* (made by ``react(name=...)``).

    Args:
        agent: the sub-agent; it needs a name.
        description: what the caller's model is told the tool does (default: the
            agent's description).
        tool_name: the tool's name (default ``transfer_to_<agent name>``).
    """
    if not isinstance(agent, Agent | AgentFunction) or not agent.name:
        raise ConfigError("agent.handoff_no_name", value=repr(agent))
    name = tool_name or f"transfer_to_{agent.name}"
    told = description or agent.description or f"Hand the task over to {agent.name}."

    async def transfer() -> str:
        run = current_run()
        if run is None:
            raise handoff_unavailable(name)
        return await hand_over(agent, name, run.state, run.generate, _as_text(run.state.messages))

    return define_tool(transfer, name, told)


async def hand_over(
    agent: Agent | AgentFunction,
    tool_name: str,
    state: TaskState,
    generate: Any,
    messages: list[ChatMessage],
    how: str = "handoff",
) -> str:
    """Run *agent* on *messages* in the caller's *state* (its own messages, tools and
    output put back afterwards) and return its answer; its conversation is kept in
    ``state.store["handoffs"]``, with *how* it was started (``handoff``, or ``as_tool``:
    ``assay show`` names the two apart)."""
    kept = (state.messages, state.tools, state.tool_choice, state.output)
    state.messages, state.output = messages, ModelOutput.empty()  # its answer, or none
    try:
        await agent(state, generate)
        return state.output.completion
    finally:
        record = {
            "agent": agent.name,
            "tool": tool_name,
            "how": how,
            "answer": state.output.completion,
            "messages": msgspec.to_builtins(state.messages),
        }
        state.messages, state.tools, state.tool_choice, state.output = kept
        state.store.setdefault(HANDOFFS, []).append(record)


def _as_text(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The caller's conversation for the sub-agent: user messages and what the
    assistant said, without the caller's system prompt or its tool traffic."""
    kept: list[ChatMessage] = []
    for message in messages:
        if message.role == "user":
            kept.append(ChatMessage("user", message.content))
        elif message.role == "assistant" and message.text:
            kept.append(assistant_message(message.text))
    return kept
