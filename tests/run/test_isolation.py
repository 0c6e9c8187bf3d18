"""Invariant 9 and the executor: many trials in flight, each with its own evidence.

Trials that finish in random order must still get their own outputs, their own
``record_event`` events, and report rows in plan order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.evidence import verify_run
from tests.helpers import (
    artifact_bytes,
    read_jsonl,
    run_spec_at,
    trial_events,
    unique_callable_spec,
)

SAMPLES = [{"id": f"s{i:02d}", "input": f"q{i:02d}", "expected": f"q{i:02d}"} for i in range(40)]

ASYNC_ECHO = """
import random

import anyio

import assay


async def answer(text):
    await anyio.sleep(random.uniform(0, 0.02))
    assay.record_event("extra", {"seen": text})
    await anyio.sleep(random.uniform(0, 0.01))
    return text
"""

SYNC_ECHO = """
import random
import threading
import time

import assay


def answer(text):
    time.sleep(random.uniform(0, 0.01))
    assay.record_event("extra", {"seen": text, "thread": threading.current_thread().name})
    return text
"""


def check_extra_events(out: Path) -> list[dict[str, object]]:
    """Each trial holds exactly one ``extra`` event, recorded for its own input."""
    extras = []
    for trial, events in trial_events(out).items():
        if not trial:
            continue
        started = events[0]
        assert started["type"] == "trial_started"
        sample_id = started["data"]["sample_id"]
        mine = [e for e in events if e["type"] == "extra"]
        assert len(mine) == 1, (trial, [e["type"] for e in events])
        (extra,) = mine
        assert extra["data"]["seen"] == "q" + sample_id[1:], (sample_id, extra)
        attempt = next(e for e in events if e["type"] == "attempt_started")
        assert extra["parent"] == attempt["n"]  # recorded inside the attempt
        extras.append(extra)
    return extras


@pytest.mark.parametrize("source", [ASYNC_ECHO, SYNC_ECHO], ids=["async", "sync-thread"])
@pytest.mark.doc(
    "docs/spec.md",
    'Code inside a target can add to the trial\'s evidence with `assay.record_event("extra", '
    "{...})`.",
)
def test_concurrent_trials_keep_their_own_outputs_and_events(tmp_path: Path, source: str) -> None:
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, repetitions=2)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out, max_concurrency=12)
    assert outcome.gate.status == "passed"
    assert outcome.metrics.estimate("t", "exact").passed == 80
    for bundle in read_jsonl(out / "bundles.jsonl"):
        sample_id = bundle["trial"]["sample_id"]
        output = artifact_bytes(out, bundle["observation"]["output"])
        assert output == ("q" + sample_id[1:]).encode()
    extras = check_extra_events(out)
    assert len(extras) == 80
    assert verify_run(out).ok


def test_trials_really_run_concurrently(tmp_path: Path) -> None:
    # Each trial waits for all twenty to have started: run one after another, the first
    # would never see the others and would fail after its 30 s guard.
    source = """
import anyio

STARTED = 0


async def answer(text):
    global STARTED
    STARTED += 1
    with anyio.fail_after(30):
        while STARTED < 20:
            await anyio.sleep(0.001)
    return text
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES[:20])
    outcome = run_spec_at(spec, tmp_path / "run", max_concurrency=20)
    assert outcome.metrics.estimate("t", "exact").passed == 20


@pytest.mark.doc(
    "docs/evidence.md",
    "Bundles and scores are written as trials finish and carry their plan `index`; reports list "
    "trials in plan order.",
)
def test_report_rows_and_plan_are_in_plan_order(tmp_path: Path) -> None:
    # Later samples answer first, so trials finish in roughly reverse plan order.
    source = """
import anyio


async def answer(text):
    await anyio.sleep((40 - int(text[1:])) * 0.002)
    return text
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, repetitions=2)
    out = tmp_path / "run"
    run_spec_at(spec, out, max_concurrency=40)
    finished = [b["trial"]["index"] for b in read_jsonl(out / "bundles.jsonl")]
    assert finished != sorted(finished), "trials should finish out of plan order"
    scored = [s["index"] for s in read_jsonl(out / "scores.jsonl")]
    assert scored == finished  # one scorer: each trial's score line follows its bundle
    plan = read_jsonl(out / "plan.jsonl")
    assert [p["index"] for p in plan] == list(range(80))
    expected = [(f"s{i:02d}", rep) for i in range(40) for rep in (1, 2)]
    assert [(p["sample_id"], p["repetition"]) for p in plan] == expected
    report = json.loads((out / "report.json").read_text())
    rows = report["trials"]
    assert [r["index"] for r in rows] == list(range(80))
    assert [(r["sample_id"], r["repetition"]) for r in rows] == expected
    assert [r["trial_id"] for r in rows] == [p["trial_id"] for p in plan]
