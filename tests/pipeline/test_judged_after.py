"""A trial is judged after its worker's next trial has started (``run/_judges``): read
back from a real run's evidence, which verifies and holds every trial's bundle and
scores as before; only the order of lines across trials changes."""

from __future__ import annotations

from pathlib import Path

from assay.evidence import verify_run
from tests.helpers import log_events, read_jsonl, run_spec_at, unique_callable_spec

PAUSES = """
import anyio

async def answer(text):
    await anyio.sleep(0)  # the request goes out; the answer comes on the next pass
    return text
"""


def _run(tmp_path: Path, jobs: int) -> list[tuple[str, str]]:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(6)]
    spec = unique_callable_spec(tmp_path / "spec", PAUSES, samples=samples)
    run = tmp_path / "run"
    run_spec_at(spec, run, max_concurrency=jobs)
    assert verify_run(run).ok
    assert len(read_jsonl(run / "bundles.jsonl")) == len(read_jsonl(run / "scores.jsonl")) == 6
    trials = {
        b["trial"]["trial_id"]: b["trial"]["sample_id"] for b in read_jsonl(run / "bundles.jsonl")
    }
    return [(e["type"], trials[e["trial"]]) for e in log_events(run) if e["trial"] in trials]


def test_the_answers_of_a_pass_are_in_before_its_trials_are_judged(tmp_path: Path) -> None:
    """s0 and s1 answer in one pass of the loop: each worker starts its next trial
    (a trial's events are logged together as it finishes), then s0 is judged; judged
    before the next trial started, s0's ``match`` would come before s1's events."""
    order = _run(tmp_path, jobs=2)
    assert order.index(("trial_finished", "s1")) < order.index(("match", "s0"))


def test_one_at_a_time_a_trial_is_judged_before_the_next_starts(tmp_path: Path) -> None:
    order = _run(tmp_path, jobs=1)
    assert order.index(("match", "s0")) < order.index(("trial_started", "s1"))
