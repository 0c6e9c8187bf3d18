"""``@tool(viewer=...)``, as Inspect's tools declare how a display shows their calls:
taken, kept on the Tool, and neither sent to the model nor part of the tool's digest."""

from __future__ import annotations

from typing import Any

from assay import Tool, tool


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
