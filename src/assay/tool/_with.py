"""``tool_with`` and ``ToolFunction``: Inspect's ways to rename a tool and to force one."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import msgspec

from assay.errors import ConfigError
from assay.solver._tools import Tool, ToolDef


@dataclass(frozen=True)
class ToolFunction:
    """``use_tools(..., tool_choice=ToolFunction(name="add"))``: the model must call
    the tool *name* first (the same as ``tool_choice="add"``)."""

    name: str


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
    renamed.definition = ToolDef(
        name or tool.definition.name,
        tool.definition.description if description is None else description,
        schema,
    )
    renamed.schema = msgspec.to_builtins(renamed.definition)
    return renamed
