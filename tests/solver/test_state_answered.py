"""A lean trial's state JSON is joined from the encodings its model call made
(``Model.answer``'s ``Said``) rather than encoded again: it must be ``to_json()``'s bytes
for every state, and states the join does not cover (tools, choices, a store, a limit)
must still be encoded whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from assay._digest import canonical_json
from assay.evidence._log import EventLog
from assay.evidence._recorder import CURRENT, TrialRecorder
from assay.evidence._store import ArtifactStore
from assay.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
    user_message,
)
from assay.model._model import Said
from assay.solver import TaskState
from assay.solver._state import Target, text_state
from assay.solver._tools import Tool, ToolInfo


def _answered(state: TaskState, output: ModelOutput) -> Said:
    """End *state* as the lean path does; what the model call would have said."""
    said = canonical_json(state.messages), output.record_json()
    state.output = output
    state.messages.append(output.message)
    state.completed = True
    return said


def _plain(**changes: Any) -> TaskState:
    state = text_state("mock/m", "s1", 2, '2 + 2 = "?" ü', "4", {"level": 1, "z": [1]})
    for name, value in changes.items():
        setattr(state, name, value)
    return state


def _shapes() -> list[tuple[str, TaskState]]:
    chat = [ChatMessage("system", "be brief"), user_message("2 + 2?")]
    with_store = _plain()
    with_store.store["k"] = {"v": [1, 2]}
    tools = [Tool.unavailable(ToolInfo("add", "adds", {"type": "object"}))]
    return [
        ("plain", _plain()),
        ("int id, no metadata", text_state("mock/m", 7, 1, "q", "4", None)),
        ("chat input", TaskState(model="m", sample_id=3, epoch=1, input=chat, target=Target(""))),
        (
            "choices",
            TaskState(
                model="m", sample_id=3, epoch=1, input="q", target=Target(""), choices=["a", "b"]
            ),
        ),
        ("store", with_store),
        ("limit", _plain(limit="token")),
        ("tools", _plain(tools=tools, tool_choice="add")),
        ("no message before", _plain(messages=[])),
    ]


@pytest.mark.parametrize(("name", "state"), _shapes())
def test_the_joined_json_is_to_json_for_every_shape(name: str, state: TaskState) -> None:
    output = ModelOutput("mock/m", ChatMessage("assistant", "4 ✓"), usage=ModelUsage(3, 1))
    said = _answered(state, output)
    assert state.json_answered(said) == state.to_json() == canonical_json(state.to_record())


def test_a_text_state_is_the_one_taskstate_makes() -> None:
    made = TaskState(
        model="m", sample_id="s", epoch=1, input="q", target=Target("t"), metadata={"a": 1}
    )
    cheap = text_state("m", "s", 1, "q", "t", {"a": 1})
    assert list(vars(cheap)) == list(vars(made))
    assert cheap.to_json() == made.to_json() and cheap.target.target == made.target.target


def _answer(
    messages: list[ChatMessage], tmp_path: Path, recorded: bool = True
) -> tuple[ModelOutput, Said | None]:
    """``Model.answer`` of *messages* in a trial (*recorded*) or outside any."""
    model = get_model("mock/m", default_output="four")
    store = ArtifactStore(tmp_path / "artifacts", write=False)
    recorder = TrialRecorder(EventLog([]), store, "t-1")

    async def go() -> tuple[ModelOutput, Said | None]:
        token = CURRENT.set(recorder if recorded else None)
        try:
            return await model.answer(messages, None, model.config)
        finally:
            CURRENT.reset(token)

    return anyio.run(go)


def test_answer_says_what_its_artifacts_were_made_of(tmp_path: Path) -> None:
    messages = [user_message("2 + 2?")]
    output, said = _answer(messages, tmp_path)
    assert said == (canonical_json(messages), output.record_json())
    _, unsaid = _answer(messages, tmp_path, recorded=False)
    assert unsaid is None  # nothing recorded: nothing to reuse


def test_answer_says_nothing_of_messages_it_sent_changed(tmp_path: Path) -> None:
    """Images given as files are sent inlined: the evidence is not *messages*' encoding."""
    image = tmp_path / "dot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    messages = [ChatMessage("user", [ContentText("what?"), ContentImage(str(image))])]
    _, said = _answer(messages, tmp_path)
    assert said is None


def test_a_config_holding_a_list_is_encoded_on_every_call() -> None:
    """The model's config is encoded once only when nothing in it can change."""
    model = get_model("mock/m", config=GenerateConfig(stop=["a"], temperature=0.5))
    model.config.stop.append("b")  # type: ignore[union-attr]
    expected = canonical_json({"config": model.config, "messages": [], "tools": []})
    assert model._prompt_json(b"[]", None, model.config) == expected
    plain = get_model("mock/m", config=GenerateConfig(temperature=0.5))
    expected = canonical_json({"config": plain.config, "messages": [], "tools": []})
    assert plain._prompt_json(b"[]", None, plain.config) == expected
