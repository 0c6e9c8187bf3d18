"""``@tool(viewer=...)``, as Inspect's tools declare how a display shows their calls:
taken, kept on the Tool, neither sent to the model nor part of the tool's digest, and
used, as Inspect uses it, for the view of a call an approver is given."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from assay import Tool, tool
from assay.approval import Approval, ApprovalPolicy, ToolCallContent, ToolCallView
from assay.approval._apply import approval_scope
from assay.model import ToolCall
from assay.solver import Target, TaskState
from assay.solver._tool_calls import call_tools


def code_viewer(language: str, code_param: str) -> Any:
    """Inspect's usual viewer: the call's code argument shown as a fenced block."""

    def viewer(call: Any) -> str:
        return f"```{language}\n{call.arguments.get(code_param, '')}\n```"

    return viewer


SHOW_BASH = code_viewer("bash", "cmd")


@tool(viewer=SHOW_BASH)
def bash(timeout: int | None = None) -> Tool:
    async def execute(cmd: str) -> str:
        """Run a shell command.

        Args:
            cmd: the command.
        """
        return cmd

    return execute


@tool
def plain_bash(timeout: int | None = None) -> Tool:
    async def execute(cmd: str) -> str:
        """Run a shell command.

        Args:
            cmd: the command.
        """
        return cmd

    return execute


def test_a_factory_tool_keeps_its_viewer_and_sends_the_same_schema() -> None:
    made, plain = bash(), plain_bash()
    assert made.viewer is SHOW_BASH and plain.viewer is None
    assert made.schema["parameters"] == plain.schema["parameters"]
    assert "viewer" not in repr(made)


@tool(viewer=SHOW_BASH)
async def echo(text: str) -> str:
    """Say it back."""
    return text


def test_a_plain_tool_function_takes_a_viewer_too() -> None:
    assert echo.viewer is SHOW_BASH
    assert set(echo.schema) == {"name", "description", "parameters"}


def as_code(call: ToolCall) -> ToolCallView:
    """An Inspect-style viewer: a ``ToolCallView`` titled with the tool's name."""
    content = ToolCallContent(title="echo", format="markdown", content=call.arguments["text"])
    return ToolCallView(call=content)


@tool(viewer=as_code)
async def viewed_echo(text: str) -> str:
    """Say it back."""
    return text


@pytest.mark.parametrize(
    ("made", "shown"),
    [
        (
            viewed_echo,
            ToolCallView(call=ToolCallContent(title="echo", format="markdown", content="hi")),
        ),
        (bash(), ToolCallView(call=ToolCallContent(format="markdown", content="```bash\nhi\n```"))),
        (
            plain_bash(),
            ToolCallView(
                call=ToolCallContent(format="markdown", content="```\nplain_bash(cmd='hi')\n```")
            ),
        ),
    ],
    ids=["a ToolCallView", "markdown text", "no viewer"],
)
def test_an_approver_sees_the_call_as_the_tool_s_viewer_shows_it(
    made: Tool, shown: ToolCallView
) -> None:
    seen: list[ToolCallView] = []

    async def approver(message: str, call: ToolCall, view: ToolCallView, history: Any) -> Approval:
        seen.append(view)
        return Approval(decision="approve")

    name = made.name
    argument = "text" if made is viewed_echo else "cmd"
    state = TaskState(model="m", sample_id=1, epoch=1, input="", target=Target(""))
    state.tools = [made]

    async def main() -> None:
        with approval_scope([ApprovalPolicy(approver, "*")]):
            await call_tools(state, [ToolCall(id="c1", function=name, arguments={argument: "hi"})])

    anyio.run(main)
    assert seen == [shown]
    assert state.messages[-1].text == "hi"  # approved, and run
