"""``@tool`` definitions: the schema a model is told, the checks a call's arguments go
through, what a tool's answer becomes, and the one-line errors of bad definitions and
bad ``use_tools`` / ``generate`` arguments."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import anyio
import pytest

from assay import Tool, ToolError, generate, tool, use_tools
from assay.errors import ConfigError
from assay.solver import Target, TaskState
from assay.solver._tools import ToolCallError


@dataclasses.dataclass
class Point:
    x: int
    y: int


@tool
def move(
    point: Point,
    steps: int,
    direction: Literal["up", "down"] = "up",
    scale: float | None = None,
    tags: list[str] = [],  # noqa: B006 - a mutable default must be copied for each call
) -> dict[str, Any]:
    """Move a point
    some steps.

    Longer text that is not the description.

    Args:
        point: where to start.
        steps: how far to go,
            in whole steps.
    """
    tags.append("moved")
    dy = steps if direction == "up" else -steps
    return {"x": point.x, "y": point.y + dy, "tags": tags}


def execute(t: Tool, arguments: dict[str, Any]) -> str:
    return anyio.run(t.execute, arguments)


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    assert move.name == "move"
    assert move.definition.description == "Move a point some steps."
    params = move.definition.parameters
    assert params["required"] == ["point", "steps"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert props["point"] == {"$ref": "#/$defs/Point", "description": "where to start."}
    assert props["steps"] == {"type": "integer", "description": "how far to go, in whole steps."}
    assert props["direction"] == {"enum": ["down", "up"], "default": "up"}
    assert props["scale"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert props["tags"]["type"] == "array"
    assert params["$defs"]["Point"]["required"] == ["x", "y"]
    assert move.schema == {
        "name": "move",
        "description": "Move a point some steps.",
        "parameters": params,
    }


def test_a_tool_is_still_the_function() -> None:
    assert move(Point(1, 2), 3, tags=["a"]) == {"x": 1, "y": 5, "tags": ["a", "moved"]}
    assert move.__name__ == "move" and "Move a point" in (move.__doc__ or "")


def test_arguments_are_converted_and_defaults_filled_and_copied() -> None:
    first = execute(move, {"point": {"x": 1, "y": 2}, "steps": 3, "direction": "down"})
    assert first == '{"x":1,"y":-1,"tags":["moved"]}'
    again = execute(move, {"point": {"x": 0, "y": 0}, "steps": 1})
    assert again == '{"x":0,"y":1,"tags":["moved"]}'  # the default list was not shared


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"point": {"x": 1, "y": 2}}, "Object missing required field `steps`"),
        ({"point": {"x": 1, "y": 2}, "steps": "3"}, "Expected `int`, got `str` - at `$.steps`"),
        ({"point": {"x": 1}, "steps": 3}, "Object missing required field `y` - at `$.point`"),
        ({"point": {"x": 1, "y": 2}, "steps": 3, "speed": 9}, "unknown field `speed`"),
        (
            {"point": {"x": 1, "y": 2}, "steps": 3, "direction": "left"},
            "Invalid enum value 'left' - at `$.direction`",
        ),
        ({"_raw": "{steps: 3"}, "the arguments are not a JSON object: {steps: 3"),
    ],
)
def test_arguments_that_do_not_fit_are_a_tool_call_error(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolCallError) as info:
        execute(move, arguments)
    assert message in str(info.value)


def test_async_tools_names_descriptions_and_answers() -> None:
    @tool(name="look-up", description="Find a word.")
    async def lookup(word: str) -> None:
        """Ignored, the description is given."""

    assert lookup.schema["name"] == "look-up"
    assert lookup.schema["description"] == "Find a word."
    assert execute(lookup, {"word": "x"}) == ""  # None is an empty answer

    @tool
    def flag(on: bool) -> Any:
        return object() if on else [on]

    assert flag.schema["description"] == ""
    assert execute(flag, {"on": False}) == "[false]"
    with pytest.raises(TypeError, match="tool 'flag' returned a object, which is not text"):
        execute(flag, {"on": True})


def test_a_tool_error_propagates_from_execute() -> None:
    @tool
    def refuse(why: str) -> str:
        raise ToolError(why)

    with pytest.raises(ToolError, match="no thanks"):
        execute(refuse, {"why": "no thanks"})


def _untyped(x):  # type: ignore[no-untyped-def]
    return x


def _star(*words: str) -> str:
    return ""


def _kwargs(**options: int) -> str:
    return ""


def _positional(x: int, /) -> int:
    return x


class Opaque:
    pass


def _opaque(thing: Opaque) -> str:
    return ""


def _unresolved(thing: Missing) -> str:  # type: ignore[name-defined]  # noqa: F821
    return ""


@pytest.mark.parametrize(
    ("function", "key", "named"),
    [
        (_untyped, "tool.no_type_hint", "'x'"),
        (_star, "tool.parameter_kind", "'words'"),
        (_kwargs, "tool.parameter_kind", "'options'"),
        (_positional, "tool.parameter_kind", "'x'"),
        (_opaque, "tool.unsupported_type", "Opaque"),
        (_unresolved, "tool.unsupported_type", "Missing"),
        (Opaque, "tool.not_function", "Opaque"),
    ],
)
def test_a_bad_definition_fails_at_definition_in_one_line(
    function: Any, key: str, named: str
) -> None:
    with pytest.raises(ConfigError) as info:
        tool(function)
    assert info.value.key == key
    line = str(info.value)
    assert "\n" not in line and named in line
    if key != "tool.not_function":
        assert f"test_tools.py:{function.__code__.co_firstlineno}" in line  # where it is


def test_a_bad_name_fails_at_definition() -> None:
    with pytest.raises(ConfigError) as info:
        tool(name="two words")(_star)
    assert info.value.key == "tool.bad_name"


def test_use_tools_checks_its_tools_and_tool_choice() -> None:
    @tool
    def other(x: int) -> int:
        return x

    with pytest.raises(ConfigError) as info:
        use_tools(_star)
    assert info.value.key == "tool.not_a_tool"
    with pytest.raises(ConfigError) as info:
        use_tools(move, [move])
    assert info.value.key == "tool.duplicate"
    with pytest.raises(ConfigError) as info:
        use_tools(move, tool_choice="other")
    assert info.value.key == "tool.unknown_choice"
    with pytest.raises(ConfigError) as info:
        generate(tool_calls="always")  # type: ignore[arg-type]
    assert info.value.key == "tool.bad_tool_calls"

    state = TaskState(model="m", sample_id=1, epoch=1, input="q", target=Target(""))
    step = use_tools(move, tool_choice="move")

    async def no_generate(state: TaskState, tool_calls: str = "loop", **config: Any) -> TaskState:
        raise AssertionError("use_tools does not call the model")

    state = anyio.run(step, state, no_generate)
    assert [t.name for t in state.tools] == ["move"] and state.tool_choice == "move"
    state = anyio.run(use_tools(other, append=True), state, no_generate)
    assert [t.name for t in state.tools] == ["move", "other"]


def test_a_state_with_tools_reads_back_with_their_definitions() -> None:
    state = TaskState(model="m", sample_id=1, epoch=1, input="q", target=Target(""))
    assert "tools" not in state.to_record()  # a state without tools records as before
    state.tools, state.tool_choice = [move], "none"
    record = state.to_record()
    assert record["tools"] == [move.schema] and record["tool_choice"] == "none"
    back = TaskState.from_record(record, "")
    assert [t.schema for t in back.tools] == [move.schema]
    assert back.tool_choice == "none"
    with pytest.raises(ToolError, match="not available"):
        execute(back.tools[0], {})
    assert repr(move) == repr(back.tools[0])  # the repr a spec records: the definition's
