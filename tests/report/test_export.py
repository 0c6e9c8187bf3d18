"""``assay export`` of a run whose trials did not all answer: a blocked trial (every
attempt an infrastructure failure) has no output and no media type, and is still a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.log import read_eval_log
from tests.helpers import run_cli, simple_spec

QUICK_RETRY = {"max_attempts": 2, "initial_backoff": 0.01, "max_backoff": 0.02}


def blocked_run(tmp_path: Path) -> Path:
    """One sample whose program never starts: its one trial is blocked."""
    samples = [{"id": "s0", "input": "q", "expected": "q"}]
    targets = [{"id": "t", "argv": [str(tmp_path / "no-such-program")]}]
    spec = simple_spec(tmp_path / "spec", samples=samples, targets=targets, retry=QUICK_RETRY)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # inconclusive: a trial blocked
    return run


@pytest.mark.doc("docs/cli.md", "`export RUN` writes one row per finished trial")
def test_a_blocked_trial_is_exported_as_a_row_without_an_answer(tmp_path: Path) -> None:
    run = blocked_run(tmp_path)
    proc = run_cli("export", run, "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    (row,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert (row["sample_id"], row["state"], row["answer"]) == ("s0", "blocked", None)
    csv = run_cli("export", run)
    assert csv.returncode == 0, csv.stderr
    assert len(csv.stdout.splitlines()) == 2  # the header and the blocked trial


def test_a_blocked_trial_is_in_the_inspect_log(tmp_path: Path) -> None:
    run = blocked_run(tmp_path)
    log = read_eval_log(run)
    assert log.samples is not None
    (sample,) = log.samples
    assert (sample.id, sample.state, sample.completion) == ("s0", "blocked", None)
    proc = run_cli("export", run, "--format", "inspect", "-o", tmp_path / "run.eval")
    assert proc.returncode == 0, proc.stderr
