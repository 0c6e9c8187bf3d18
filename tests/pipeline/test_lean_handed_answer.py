"""A solver target hands the run's judge its answer text (``TargetOutcome.answer``,
``answer_in_json``) so the judge need not decode the state record it just encoded. The
verdict must be the one re-scoring from the recorded bytes gives (``assay score``
decodes them): the handed text must be exactly what the bytes decode to, for any text,
and be withheld where the typed decode would refuse the record."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import assay.score._adapter as adapter_module
from assay import Sample, eval
from assay.evidence._framed import read_evidence
from assay.model import ChatMessage, Limits, ModelOutput, get_model
from assay.pipeline import rescore_run
from assay.solver import Chain, generate
from assay.solver._state import answer_in_json, completion_from_json, text_state
from assay.target._solver import SolverTarget

ODD = [
    "",
    "4",
    "é ü 中文 😀 \u2028\u2029 \ufeff",
    '"quoted" \\ back\\slash \n newline \t tab \x00 \x1f \x7f </script>',
    "\\u0041 is not A",
    "x" * 300_000,
]


TASK = """
from assay import Sample, Task, match, task

ODD = %r


@task
def handed() -> Task:
    samples = [Sample(input=f"question {i}", target=ODD[i %% 6] or "4", id=f"s{i}")
               for i in range(12)]
    return Task(dataset=samples, scorer=match())
"""
"""Twelve questions, each asking for ``ODD``'s text by its number (re-scorable: a file)."""


def _echoes(messages: list[ChatMessage]) -> str:
    """The answer the question's number picks from ``ODD``."""
    return ODD[int(str(messages[-1].content).split()[-1]) % len(ODD)]


async def _outcome(text: str) -> Any:
    model = get_model("mock/x", outputs=lambda _messages: text)
    target = SolverTarget("t", model, Chain([generate()]), Limits())
    return await target.call(Sample(input="q", target="q", id="s1"))


@pytest.mark.anyio
@pytest.mark.parametrize("text", ODD, ids=range(len(ODD)))
async def test_the_handed_answer_is_what_the_bytes_decode_to(text: str) -> None:
    outcome = await _outcome(text)
    assert outcome.answer is not None  # the lean target hands it over
    assert outcome.answer == completion_from_json(outcome.output) == text


def _state(sample_id: Any = "s1", text: str = "a") -> Any:
    state = text_state("mock/x", sample_id, 1, "q", "a", None)
    state.output = ModelOutput("mock/x", ChatMessage("assistant", text))
    state.completed = True
    return state


def test_no_answer_is_handed_where_the_typed_decode_refuses_the_record() -> None:
    for state in (_state(True), _state(1.5)):  # ids encoded true, 1.5: not str | int
        assert completion_from_json(state.to_json()) is None
        assert answer_in_json(state) is None
    assert answer_in_json(_state(7)) == completion_from_json(_state(7).to_json()) == "a"


def test_a_state_with_tools_hands_no_answer() -> None:
    state = _state()
    state.tools = [object()]  # any tool: its record may hold a struct ``tool_choice``
    assert answer_in_json(state) is None


def test_a_run_judges_from_the_handed_text_and_rescoring_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[bytes] = []
    real = adapter_module.completion_from_json

    def counting(data: bytes) -> str | None:
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(adapter_module, "completion_from_json", counting)
    task_file = tmp_path / "handed.py"
    task_file.write_text(TASK % (ODD,), encoding="utf-8")
    (result,) = eval(
        f"{task_file}@handed",
        model="mock/x",
        model_args={"outputs": _echoes},
        log_dir=tmp_path / "runs",
    )
    assert result.path is not None
    assert decoded == []  # every trial judged from the text its target handed over
    lines = read_evidence(result.path / "scores.jsonl").splitlines()
    scores = [json.loads(line) for line in lines]
    assert {s["status"] for s in scores} == {"passed", "failed"} and len(scores) == 12
    again = rescore_run(result.path)
    assert len(decoded) == 12  # re-scoring decodes the recorded bytes
    assert again.scores == 12 and again.differing == []


def test_any_text_and_id_hand_what_the_bytes_decode_to() -> None:
    """Random text (any code point but surrogates, which no JSON encodes) and ids of
    every type a record may hold: the handed answer is the decoded one or withheld."""
    rng = random.Random(19)
    ids: list[Any] = ["s1", "", 0, -(2**70), 2**64, True, False, 1.5, None]
    for number in range(300):
        length = rng.choice([0, 1, 5, 50, 2000])
        points = [rng.randrange(0x10FFFF) for _ in range(length)]
        text = "".join(chr(p) for p in points if not 0xD800 <= p <= 0xDFFF)
        state = _state(ids[number % len(ids)], text)
        handed, decoded = answer_in_json(state), completion_from_json(state.to_json())
        assert handed is None or handed == decoded == text, (number, text)
        if type(state.sample_id) in (str, int):
            assert handed == text  # withheld only where the decode could refuse
