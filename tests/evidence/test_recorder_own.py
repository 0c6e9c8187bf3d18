"""``TrialRecorder.own``, ``own_two`` (nested, or ending the trial), ``finish``,
``match`` and ``stored``: the trial path's shortcuts log exactly what ``record``,
``close`` and ``artifact`` do, batched or one line an event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import ArtifactStore, TrialRecorder
from assay.evidence._log import EventLog, FileSink


def _trial(folder: Path, shortcuts: str) -> tuple[list[dict[str, Any]], TrialRecorder]:
    folder.mkdir()
    sink = FileSink(folder / "events.jsonl")
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(folder / "artifacts"), "t-1")
    started = {"index": 0, "sample_id": "s", "target_id": "t", "repetition": 1}
    attempt = {"attempt": 1, "target": "t"}
    sampling = {"attempt": 1, "prompt": "p", "output": "o", "usage": {"input_tokens": 2}}
    ended = {"attempt": 1, "status": "succeeded", "outcome": "answered"}
    summary = {"state": "completed", "canonical_attempt": 1, "attempts": 1}
    match = {"scorer": "exact", "status": "passed", "bundle": "b", "record": "r"}
    if shortcuts == "paired":  # run_trial's: two events a call, the last three in one
        recorder.stored("sample", b"sample bytes")
        recorder.root = recorder.own_two(
            "trial_started", started, "attempt_started", attempt, None, nested=True
        )
        n = recorder.root + 1
        recorder.own_two("sampling", sampling, "attempt_finished", ended, n, summary=summary)
        recorder.match(match["scorer"], match["status"], match["bundle"], match["record"])
    elif shortcuts == "own":
        recorder.stored("sample", b"sample bytes")
        recorder.root = recorder.own("trial_started", started, None)
        n = recorder.own("attempt_started", attempt, recorder.root)
        recorder.own_two("sampling", sampling, "attempt_finished", ended, n)
        recorder.finish(summary, recorder.root)
        recorder.match(match["scorer"], match["status"], match["bundle"], match["record"])
    else:
        recorder.artifact("sample", b"sample bytes", "application/json")
        recorder.root = recorder.record("trial_started", started, parent=None)
        n = recorder.record("attempt_started", attempt, parent=recorder.root)
        recorder.record("sampling", sampling, parent=n)
        recorder.record("attempt_finished", ended, parent=n)
        recorder.record("trial_finished", summary, parent=recorder.root)
        recorder.close()
        recorder.record("match", match, parent=recorder.root)
    sink.close()
    recorder.store.close()
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_bytes().splitlines()]
    return lines, recorder


def _untimed(lines: list[dict[str, Any]]) -> list[Any]:
    """The lines without their times and the hashes that cover them."""
    drop = {"at", "prev"}
    out = []
    for line in lines:
        line = {k: v for k, v in line.items() if k not in drop}
        if line["type"] == "events":
            line["data"] = [
                {k: v for k, v in e.items() if k != "at"} for e in line["data"]["events"]
            ]
        out.append(line)
    return out


@pytest.mark.parametrize("shortcuts", ["own", "paired"])
@pytest.mark.parametrize(
    ("limit", "lines"),
    [(64, 2), (0, 6), (3, 3), (2, 4), (4, 3), (5, 2)],
    ids=["batched", "line an event", "cut inside a pair", "cut after a pair", "at 4", "at 5"],
)
def test_the_shortcuts_log_what_record_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, lines: int, shortcuts: str
) -> None:
    monkeypatch.setattr(TrialRecorder, "batch_limit", limit)
    general, plain = _trial(tmp_path / "record", shortcuts="record")
    short, fast = _trial(tmp_path / "shortcuts", shortcuts=shortcuts)
    assert _untimed(short) == _untimed(general)
    assert len(general) == lines  # batches of `limit` events, then the match line
    assert fast.artifacts == plain.artifacts and fast.usage == plain.usage
    assert fast.closed and plain.closed
    assert [n for n, _ in fast.events] == [n for n, _ in plain.events]


def _model_calls(folder: Path, shortcut: bool) -> tuple[list[dict[str, Any]], TrialRecorder]:
    """A trial whose model is called in its attempt, by its scorer and after its close."""
    folder.mkdir()
    sink = FileSink(folder / "events.jsonl")
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(folder / "artifacts"), "t-1")

    def call(tokens: int, cost: float | None, cached: bool = False) -> int | None:
        data = {"model": "m/x", "prompt": "p", "output": "o", "cost": cost}
        data["usage"] = {"input_tokens": tokens, "output_tokens": 1}
        if cached:
            data["cached"] = True
        if shortcut:
            return recorder.sampled(data)
        return recorder.record_if_open("sampling", data)

    recorder.root = recorder.own("trial_started", {"index": 0}, None)
    with recorder.scope(recorder.own("attempt_started", {"attempt": 1}, recorder.root)):
        numbers = [call(3, 0.5), call(4, 0.25, cached=True), call(5, None)]
    with recorder.scoring_phase():  # a scorer's call before the close: still its own
        numbers.append(call(8, 0.125))
    recorder.finish({"state": "completed"}, recorder.root)
    numbers.append(call(6, 1.0))  # a stray call after the close: dropped
    with recorder.scoring_phase():
        numbers.append(call(7, 2.0))  # the scorer's grader: its score_sampling line
    assert numbers[4] is None and None not in numbers[:4] + numbers[5:]
    sink.close()
    recorder.store.close()
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_bytes().splitlines()]
    return lines, recorder


@pytest.mark.parametrize("limit", [64, 0, 2], ids=["batched", "line an event", "cut"])
def test_a_model_calls_sampled_event_is_what_record_if_open_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(TrialRecorder, "batch_limit", limit)
    general, plain = _model_calls(tmp_path / "record", shortcut=False)
    short, fast = _model_calls(tmp_path / "sampled", shortcut=True)
    assert _untimed(short) == _untimed(general)
    assert fast.usage == plain.usage
    assert (fast.usage.calls, fast.usage.cached_calls, fast.usage.cost) == (3, 1, None)
    assert fast.usage.input_tokens == 12
    assert [n for n, _ in fast.events] == [n for n, _ in plain.events]
