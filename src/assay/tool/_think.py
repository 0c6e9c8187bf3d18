"""``think()``: a tool that changes nothing and answers nothing (Inspect's ``think``).

Calling it lets a model reason between tool calls in a place the transcript keeps: the
thought is the call's argument, recorded with the ``tool_call`` event like any other.
"""

from __future__ import annotations

from assay.solver._tools import Tool, define_tool, tool

DESCRIPTION = (
    "Use the tool to think about something. It will not obtain new information or change "
    "the environment, but just append the thought to the log. Use it when complex "
    "reasoning or some cache memory is needed."
)
THOUGHT_DESCRIPTION = "A thought to think about."


@tool
def think(description: str | None = None, thought_description: str | None = None) -> Tool:
    """The think tool, with its description and its parameter's description replaceable.

    Args:
        description: what the model is told the tool is for.
        thought_description: what the model is told the ``thought`` parameter is.
    """

    async def execute(thought: str) -> str:
        return ""

    # the parameter's description comes from the docstring's Args section
    described = " ".join((thought_description or THOUGHT_DESCRIPTION).split())
    execute.__doc__ = f"Think.\n\nArgs:\n    thought: {described}\n"
    return define_tool(execute, "think", " ".join((description or DESCRIPTION).split()))
