"""A Python scorer reads the output artifact's JSON bytes itself (its ``TaskState``), so
the judge does not decode them first when every scorer of the run does so; scorers that
read ``Observation.output`` still get it decoded, and both see the same trial."""

from __future__ import annotations

import anyio

from assay._digest import canonical_json
from assay.model import ModelOutput
from assay.pipeline._judge import observation_of, reads_raw
from assay.score import Score, exact, from_python_scorer, score_observation
from assay.solver import TaskState
from assay.solver._state import Target

STATE_MEDIA = "application/vnd.assay.state+json"


def _bundle(outcome: str = "answered", media: str = STATE_MEDIA) -> dict[str, object]:
    return {"observation": {"expected": "4", "outcome": outcome, "media": media}}


def _output() -> bytes:
    state = TaskState(model="m", sample_id=1, epoch=1, input="2 + 2?", target=Target("4"))
    state.output = ModelOutput.from_content("m", "4")
    return canonical_json(state.to_record())


async def _answer(state: TaskState, target: Target) -> Score:
    return Score(value=1.0 if state.output.completion == target.text else 0.0)


def test_only_python_scorers_read_raw_bytes() -> None:
    python = from_python_scorer(_answer)
    assert reads_raw({"a": python})
    assert not reads_raw({"a": python, "b": exact()})


def test_an_undecoded_observation_keeps_the_bytes_and_a_decoded_one_both() -> None:
    data = _output()
    raw = observation_of(_bundle(), data, decode=False)
    assert raw.output is None and raw.raw == data
    decoded = observation_of(_bundle(), data)
    assert decoded.raw == data and decoded.output["output"]["message"]["content"] == "4"
    text = observation_of(_bundle(media="text/plain"), b"4", decode=False)
    assert text.raw is None and text.output == "4"  # text is no JSON: decoded anyway
    assert observation_of(_bundle(outcome="product_failure"), data).raw is None


def test_a_python_scorer_judges_the_raw_bytes_as_it_judged_the_decoded_value() -> None:
    python = from_python_scorer(_answer)
    data = _output()
    raw = anyio.run(score_observation, python, observation_of(_bundle(), data, decode=False))
    decoded = anyio.run(score_observation, python, observation_of(_bundle(), data))
    assert raw == decoded
    assert raw.status == "passed"
