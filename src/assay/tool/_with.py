"""``tool_with``, ``ToolDef`` and ``ToolFunction``: Inspect's ways to make or rename a
tool without ``@tool``, and to force one."""

from __future__ import annotations

from dataclasses import dataclass

from assay.solver._tool_def import ToolDef, tool_with

__all__ = ["ToolDef", "ToolFunction", "tool_with"]


@dataclass(frozen=True)
class ToolFunction:
    """``use_tools(..., tool_choice=ToolFunction(name="add"))``: the model must call
    the tool *name* first (the same as ``tool_choice="add"``)."""

    name: str
