"""Inspect's ``ToolDef`` and ``tool_with``: a tool made from a plain function, and a
tool renamed or re-described, without ``@tool``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec

from assay.errors import ConfigError
from assay.solver._tools import Tool, ToolInfo, define_tool


class ToolDef:
    """A tool from *tool* (a function with type hints and a docstring, or a ``Tool``),
    with another *name*, *description* or parameter descriptions (*parameters*: name →
    description) if given. ``as_tool()`` gives the tool; ``use_tools`` takes it as is."""

    def __init__(
        self,
        tool: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, str] | None = None,
        parallel: bool | None = None,
    ) -> None:
        if isinstance(tool, Tool):
            made = tool_with(tool, name, description, parameters)
        else:
            made = define_tool(tool, name, description, True if parallel is None else parallel)
            made = tool_with(made, parameters=parameters) if parameters else made
        if parallel is not None:
            made.parallel = parallel
        self._tool = made
        self.name = made.name
        self.description = made.definition.description
        self.parameters = made.definition.parameters
        self.parallel = made.parallel

    def as_tool(self) -> Tool:
        """The tool, for ``use_tools`` or ``react(tools=...)``."""
        return self._tool


def tool_with(
    tool: Tool,
    name: str | None = None,
    description: str | None = None,
    parameters: dict[str, str] | None = None,
) -> Tool:
    """A copy of *tool* the model knows by another *name*, *description* or parameter
    descriptions (*parameters*: name → description); *tool* itself is unchanged.

    Raises:
        ConfigError: a name in *parameters* is not one of the tool's parameters.
    """
    schema = copy.deepcopy(tool.definition.parameters)
    properties = schema.get("properties", {})
    for parameter, told in (parameters or {}).items():
        if parameter not in properties:
            raise ConfigError(
                "tool.with_unknown_parameter",
                tool=tool.name,
                parameter=parameter,
                known=", ".join(properties) or "none",
            )
        properties[parameter]["description"] = told
    renamed = copy.copy(tool)
    renamed.definition = ToolInfo(
        name or tool.definition.name,
        tool.definition.description if description is None else description,
        schema,
    )
    renamed.schema = msgspec.to_builtins(renamed.definition)
    return renamed
