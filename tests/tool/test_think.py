"""``think()``: answers nothing, needs no sandbox, and its descriptions can be replaced."""

from __future__ import annotations

import anyio

from assay.tool import think


def test_think_answers_nothing_without_a_sandbox() -> None:
    tool = think()
    assert anyio.run(tool.execute, {"thought": "first this, then that"}) == ""
    assert tool.schema["name"] == "think"
    assert tool.schema["description"].startswith("Use the tool to think about something.")
    assert tool.schema["parameters"]["properties"]["thought"] == {
        "type": "string",
        "description": "A thought to think about.",
    }
    assert tool.schema["parameters"]["required"] == ["thought"]


def test_its_descriptions_can_be_replaced() -> None:
    tool = think(
        description="Plan before acting.",
        thought_description="Your plan,\n   step by step.",
    )
    assert tool.schema["description"] == "Plan before acting."
    thought = tool.schema["parameters"]["properties"]["thought"]
    assert thought["description"] == "Your plan, step by step."
    assert repr(tool) != repr(think())  # what a spec records changes with them
