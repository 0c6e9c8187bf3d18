"""A trial is judged after its worker's next trial has started (``run/_judges``): read
back from a real run's evidence, which verifies and holds every trial's bundle and
scores as before; only the order of lines across trials changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.evidence import verify_run
from tests.helpers import log_events, read_jsonl, run_spec_at, unique_callable_spec

PAUSES = """
import anyio

async def answer(text):
    await anyio.sleep(0)  # the request goes out; the answer comes on the next pass
    return text
"""


def _run(tmp_path: Path, jobs: int, **spec: Any) -> list[tuple[str, str]]:
    """The run's trial events as (type, sample id), in log order."""
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(6)]
    spec_path = unique_callable_spec(tmp_path / "spec", PAUSES, samples=samples, **spec)
    run = tmp_path / "run"
    run_spec_at(spec_path, run, max_concurrency=jobs)
    assert verify_run(run).ok
    assert len(read_jsonl(run / "bundles.jsonl")) == len(read_jsonl(run / "scores.jsonl")) == 6
    trials = {
        b["trial"]["trial_id"]: b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl")
    }
    return [(e["type"], trials[e["trial"]]) for e in log_events(run) if e["trial"] in trials]


def _first_two(order: list[tuple[str, str]]) -> list[str]:
    """The samples of the first two trials to finish."""
    return [sample for kind, sample in order if kind == "trial_finished"][:2]


def test_the_answers_of_a_pass_are_in_before_its_trials_are_judged(tmp_path: Path) -> None:
    """s0 and s1 answer in one pass of the loop: each worker starts its next trial
    (a trial's events are logged together as it finishes), then s0 is judged; judged
    before the next trial started, s0's ``match`` would come before s1's events."""
    order = _run(tmp_path, jobs=2)
    first, second = _first_two(order)
    assert order.index(("trial_finished", second)) < order.index(("match", first))


def test_one_at_a_time_a_trial_is_judged_before_the_next_starts(tmp_path: Path) -> None:
    order = _run(tmp_path, jobs=1)
    assert order.index(("match", "s0")) < order.index(("trial_started", "s1"))


@pytest.mark.doc("docs/cli.md", "With `-j 1` or a sequential gate, a trial is judged in its place.")
def test_with_a_sequential_gate_a_trial_is_judged_before_the_next_starts(
    tmp_path: Path,
) -> None:
    """The gate sees each trial before its worker starts another, so it stops the run as
    soon as it did: the first trial answered is judged before the second's answer is
    taken in (the gate's plan is in a random order)."""
    gate = {"minimum": 0.5, "confidence": 0.95, "sequential": {"every": 2}}
    order = _run(tmp_path, jobs=2, gate=gate)
    first, second = _first_two(order)
    assert order.index(("match", first)) < order.index(("trial_finished", second))
