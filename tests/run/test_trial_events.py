"""``run_trial`` records a trial's events in few recorder calls (its start with its first
attempt's, the ending attempt's answer with ``trial_finished``): whatever the course of
the trial, the events must be those one ``record`` a call logs, and a trial must end
with exactly one ``trial_finished``, after every attempt, re-queued or not."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay._digest import canonical_json
from assay.dataset import Sample
from assay.evidence import ArtifactStore, TrialRecorder
from assay.evidence._log import EventLog, FileSink, events_in
from assay.plan import Trial
from assay.run import run_trial
from assay.run._trial import AttemptRecord
from assay.spec import RetryPolicy
from assay.target import InfrastructureError, TargetOutcome

SAMPLE = Sample(input="q", target="4", id="s1")
TRIAL = Trial(0, "t-1", 0, "s1", "x", 1)


class _Target:
    """Answers from a script: an outcome kind, or ``infra`` (an infrastructure failure)."""

    id = "x"

    def __init__(self, script: list[str]) -> None:
        self.script = script

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        kind = self.script.pop(0)
        if kind == "infra":
            raise InfrastructureError("connection", "refused")
        return TargetOutcome(kind, b'"4"', "application/json")  # type: ignore[arg-type]


async def _run(folder: Path, script: list[str], may_requeue: bool) -> list[dict[str, Any]]:
    """The trial's events as logged, after as many calls as its re-queues take."""
    folder.mkdir()
    sink = FileSink(folder / "events.jsonl")
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(folder / "artifacts"), "t-1")
    target, retry = _Target(script), RetryPolicy(max_attempts=2, initial_backoff=0.0)
    earlier: list[AttemptRecord] | None = None
    try:
        while True:
            result = await run_trial(
                TRIAL,
                SAMPLE,
                SAMPLE.to_record(),
                target,
                recorder,
                retry,
                random.Random(0),
                earlier=earlier,
                may_requeue=may_requeue and earlier is None,
            )
            if result.state != "requeued":
                break
            assert not recorder.closed
            earlier = result.attempts
        assert recorder.closed
    finally:
        sink.close()
        recorder.store.close()
    lines = (folder / "events.jsonl").read_bytes().splitlines()
    return [e for line in lines for e in events_in(json.loads(line))]


def _shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(e["n"], e["parent"], e["type"], json.dumps(e["data"])) for e in events]


@pytest.mark.parametrize(
    ("script", "may_requeue", "summary"),
    [
        (["answered"], False, {"state": "completed", "canonical_attempt": 1, "attempts": 1}),
        (["error"], False, {"state": "completed", "canonical_attempt": 1, "attempts": 1}),
        (
            ["error", "answered"],
            True,
            {"state": "completed", "canonical_attempt": 2, "attempts": 2},
        ),
        (
            ["infra", "answered"],
            False,
            {"state": "completed", "canonical_attempt": 2, "attempts": 2},
        ),
        (["infra", "infra"], False, {"state": "blocked", "canonical_attempt": None, "attempts": 2}),
    ],
    ids=["answered", "errored", "re-queued", "retried", "blocked"],
)
@pytest.mark.parametrize("limit", [64, 0, 3], ids=["batched", "line an event", "cut"])
def test_a_trials_events_are_one_record_a_calls_and_it_ends_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    script: list[str],
    may_requeue: bool,
    summary: dict[str, Any],
    limit: int,
) -> None:
    monkeypatch.setattr(TrialRecorder, "batch_limit", limit)
    events = anyio.run(_run, tmp_path / "trial", list(script), may_requeue)
    general = _run_by_record(tmp_path / "record", list(script))
    assert _shape(events) == _shape(general)
    ends = [e for e in events if e["type"] == "trial_finished"]
    assert len(ends) == 1 and events[-1] is ends[0] and ends[0]["data"] == summary


def _run_by_record(folder: Path, script: list[str]) -> list[dict[str, Any]]:
    """The same trial's events written one ``record`` a call (the format before batches),
    as ``run_trial`` recorded them before its shortcuts: the reference."""
    folder.mkdir()
    sink = FileSink(folder / "events.jsonl")
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(folder / "artifacts"), "t-1")
    sample = recorder.artifacts["sample"] = recorder.store.put_digest(
        canonical_json(SAMPLE.to_record())
    )
    started = {"index": 0, "sample_id": "s1", "target_id": "x", "repetition": 1, "sample": sample}
    root = recorder.root = recorder.record("trial_started", started, parent=None)
    state, canonical = "blocked", None
    for number, kind in enumerate(script, 1):
        begun = recorder.record("attempt_started", {"attempt": number, "target": "x"}, root)
        if kind == "infra":
            detail = {"attempt": number, "kind": "infrastructure", "reason": "connection"}
            recorder.record("error", {**detail, "detail": "refused"}, begun)
            recorder.record("attempt_finished", {**detail, "status": "infra_failed"}, begun)
            continue
        output = recorder.store.put_digest(b'"4"')
        data = {"attempt": number, "prompt": sample, "output": output, "outcome": kind}
        recorder.record("sampling", data, begun)
        status = "errored" if kind == "error" else "succeeded"
        finished = {"attempt": number, "status": status, "outcome": kind}
        recorder.record("attempt_finished", finished, begun)
        state, canonical = "completed", number
    ended = {"state": state, "canonical_attempt": canonical, "attempts": len(script)}
    recorder.record("trial_finished", ended, root)
    recorder.close()
    sink.close()
    recorder.store.close()
    lines = (folder / "events.jsonl").read_bytes().splitlines()
    return [e for line in lines for e in events_in(json.loads(line))]
