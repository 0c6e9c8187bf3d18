"""Built-in tools that run in the sample's sandbox, and ``@tool`` (Inspect's ``tool`` module).

``bash()``, ``python()`` and ``text_editor()`` act in ``sandbox()``, the current sample's
sandbox; ``think()`` gives the model a place to think out loud. Each is a factory: call
it (``use_tools(bash(timeout=30))``) to make the tool. See docs/tools.md.
"""

from assay.model import ContentImage, ContentText, ToolCall
from assay.solver._tools import Tool, ToolCallError, ToolError, ToolInfo, tool
from assay.tool._exec import bash, python
from assay.tool._text_editor import text_editor
from assay.tool._think import think
from assay.tool._with import ToolDef, ToolFunction, tool_with

ToolResult = (
    str | int | float | bool | ContentText | ContentImage | list[ContentText | ContentImage]
)
"""What a tool's function may return (Inspect's name); it reaches the model as text."""

__all__ = [
    "ContentImage",
    "ContentText",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolDef",
    "ToolError",
    "ToolFunction",
    "ToolInfo",
    "ToolResult",
    "bash",
    "python",
    "text_editor",
    "think",
    "tool",
    "tool_with",
]
