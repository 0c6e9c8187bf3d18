"""What a scorer is handed: the TaskState rebuilt from the output artifact's bytes.
The fast typed decode (``state_from_json``) must rebuild exactly what ``from_record``
does, and bytes that are no state must fail the same way."""

from __future__ import annotations

import pytest

from assay._digest import canonical_json, loads
from assay.model import (
    ChatCompletionChoice,
    ChatMessage,
    Logprob,
    ModelOutput,
    ModelUsage,
    ToolCall,
    TopLogprob,
    assistant_message,
    system_message,
    user_message,
)
from assay.solver import TaskState
from assay.solver._state import Target, state_from_json
from assay.solver._tools import Tool, ToolInfo


def _state(chat: bool, tools: bool) -> TaskState:
    prompt: str | list[ChatMessage] = (
        [system_message("be brief"), user_message("2 + 2?")] if chat else "2 + 2?"
    )
    state = TaskState(
        model="mock/m",
        sample_id="s1" if chat else 7,
        epoch=2,
        input=prompt,
        target=Target(["4", "four"]),
        choices=["3", "4"],
        metadata={"level": 1, "tags": ["a"]},
    )
    state.store["k"] = {"v": [1, 2]}
    state.choices[1].correct = True
    state.completed = True
    state.limit = "tokens" if chat else None
    if tools:
        state.tools = [Tool.unavailable(ToolInfo("add", "adds", {"type": "object"}))]
        state.tool_choice = "add"
    return state


@pytest.mark.parametrize(("chat", "tools"), [(False, False), (True, False), (True, True)])
def test_the_typed_decode_rebuilds_what_from_record_does(chat: bool, tools: bool) -> None:
    data = canonical_json(_state(chat, tools).to_record())
    fast = state_from_json(data, ["4", "four"])
    slow = TaskState.from_record(loads(data), ["4", "four"])
    assert canonical_json(fast.to_record()) == canonical_json(slow.to_record()) == data
    assert fast.target.target == slow.target.target == ["4", "four"]
    assert fast.tool_choice == slow.tool_choice
    assert [t.schema for t in fast.tools] == [t.schema for t in slow.tools]


def test_bytes_that_are_no_state_fail_as_from_record_fails() -> None:
    with pytest.raises(KeyError, match="input"):
        state_from_json(b'{"answer": 4}', "4")


@pytest.mark.parametrize(("chat", "tools"), [(False, False), (True, False), (True, True)])
def test_to_json_writes_the_bytes_of_the_record(chat: bool, tools: bool) -> None:
    """A solver target writes ``to_json()`` (its structs encoded as they are): the very
    bytes ``canonical_json(to_record())`` gives, so old runs and re-scores read the same."""
    state = _state(chat, tools)
    state.messages.append(user_message("and 3 + 3?"))
    assert state.to_json() == canonical_json(state.to_record())


@pytest.mark.parametrize("alternatives", [False, True])
def test_to_json_writes_a_full_output_as_its_record(alternatives: bool) -> None:
    """The output is encoded field by field as it is (``_output_fields``): a call's
    usage, logprobs, tool calls and stop reason give the bytes of ``to_record`` too, and
    ``alternatives`` appears only when the call gave some."""
    state = _state(chat=True, tools=False)
    state.output = _full_output(alternatives)
    data = state.to_json()
    assert data == canonical_json(state.to_record())
    assert (b'"alternatives"' in data) is alternatives


@pytest.mark.parametrize("alternatives", [False, True])
def test_an_outputs_record_bytes_are_its_records_canonical_json(alternatives: bool) -> None:
    """``ModelOutput.record_json`` (the ``sampling`` event's output artifact) encodes the
    struct, not ``to_record``'s dicts: the same bytes, ``alternatives`` only if given."""
    plain = ModelOutput.from_content("mock/m", "plain", ModelUsage(2, 1))
    for output in (plain, _full_output(alternatives)):
        assert output.record_json() == canonical_json(output.to_record())
        assert (b'"alternatives"' in output.record_json()) is (output.alternatives is not None)


def _full_output(alternatives: bool) -> ModelOutput:
    """A call's output with every field set: usage, logprobs, a tool call, the stop
    reason, and other answers if *alternatives*."""
    tokens = [Logprob("4", -0.1, [TopLogprob("4", -0.1), TopLogprob("5", -2.5)])]
    others = [ChatCompletionChoice(assistant_message("four"), "length", tokens)]
    return ModelOutput(
        "mock/m",
        assistant_message("4", tool_calls=[ToolCall("c1", "add", {"b": 2, "a": 1})]),
        stop_reason="tool_calls",
        usage=ModelUsage(12, 3),
        cached=True,
        logprobs=tokens,
        alternatives=others if alternatives else None,
    )
