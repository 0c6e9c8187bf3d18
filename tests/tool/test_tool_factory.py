"""``@tool`` on an Inspect-style factory (an outer function returning the async
``execute``), next to today's form; ``@tool(name=, parallel=)``; the one-line errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from assay import Tool, tool, use_tools
from assay._registry import registry_info
from assay.errors import ConfigError
from assay.solver._tools import ToolCallError


@tool
def add(offset: int = 0) -> Tool:
    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: First number to add.
            y: Second number to add.
        """
        return x + y + offset

    return execute  # type: ignore[return-value]  # Inspect's Tool is a protocol; ours a class


@tool(name="shout", parallel=False)
def loud():  # type: ignore[no-untyped-def]  # Inspect code often has no annotation at all
    async def execute(text: str) -> str:
        """Say it louder."""
        return text.upper()

    return execute


@tool
def now() -> str:
    """Today's form: a sync tool with no parameters stays a tool, not a factory."""
    return "noon"


def run(t: Tool, arguments: dict[str, Any]) -> str:
    return anyio.run(t.execute, arguments)


def test_a_factory_makes_a_tool_named_after_it_with_execute_s_schema() -> None:
    made = add(offset=10)
    assert isinstance(made, Tool)
    assert made.schema == {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {
                "x": {"type": "integer", "description": "First number to add."},
                "y": {"type": "integer", "description": "Second number to add."},
            },
            "required": ["x", "y"],
            "additionalProperties": False,
        },
    }
    assert run(made, {"x": 2, "y": 3}) == "15"
    with pytest.raises(ToolCallError, match="Expected `int`, got `str`"):
        run(made, {"x": "2", "y": 3})
    assert made.parallel is True


def test_name_and_parallel_apply_to_the_tools_a_factory_makes() -> None:
    made = loud()
    assert made.name == "shout" and made.parallel is False
    assert run(made, {"text": "hi"}) == "HI"


def test_today_s_form_is_unchanged() -> None:
    assert isinstance(now, Tool) and now.name == "now" and now() == "noon"
    assert run(now, {}) == "noon"


def test_the_factory_s_arguments_are_recorded_and_change_what_a_spec_records() -> None:
    info = registry_info(add(offset=1))
    assert info is not None and (info.kind, info.name, info.args) == ("tool", "add", {"offset": 1})
    # same definition, other arguments: the repr (what a spec records of use_tools) differs
    assert add(offset=1).schema == add(offset=2).schema
    assert repr(add(offset=1)) != repr(add(offset=2))
    assert repr(add(offset=1)) == repr(add(offset=1))


def test_an_uncalled_factory_given_to_use_tools_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError) as info:
        use_tools(add)  # type: ignore[arg-type]
    assert info.value.key == "tool.factory_not_called"
    assert str(info.value) == (
        "use_tools was given the tool factory 'add', not a tool — call it to make the tool: "
        "use_tools(add())"
    )
    assert use_tools(add())  # called, it is fine


def test_a_factory_returning_no_function_is_a_one_line_error_naming_where() -> None:
    @tool
    def broken() -> Tool:
        return 42  # type: ignore[return-value]

    with pytest.raises(ConfigError) as info:
        broken()
    assert info.value.key == "tool.factory_result"
    line = str(info.value)
    assert "\n" not in line and "'broken' returned 42" in line
    assert "test_tool_factory.py:" in line


def test_a_bad_execute_fails_when_the_factory_is_called() -> None:
    @tool
    def untyped() -> Tool:
        async def execute(x):  # type: ignore[no-untyped-def]
            return x

        return execute  # type: ignore[return-value]

    with pytest.raises(ConfigError) as info:
        untyped()
    assert info.value.key == "tool.no_type_hint"


def test_a_bad_name_for_a_factory_fails_at_definition() -> None:
    def spaced() -> Tool:
        raise AssertionError("never called")

    with pytest.raises(ConfigError) as info:
        tool(name="two words")(spaced)
    assert info.value.key == "tool.bad_name"
