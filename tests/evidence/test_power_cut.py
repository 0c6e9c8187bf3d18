"""A power cut mid-run: lines reached the OS but were not fsync'd one by one, so the end
of any file can be lost, in any order across files. The case a kill cannot make (the
order of writes guards it): a bundle kept while the end of the event log that it lists
was lost. ``assay resume`` must not build on that bundle; it runs its trial again.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from assay.errors import EXIT_PASSED
from assay.evidence import TrialRecorder, verify_run
from tests.helpers import (
    log_events,
    read_jsonl,
    results_view,
    run_cli,
    run_spec_at,
    trial_starts,
    unique_callable_spec,
)

STOPPING = """
from pathlib import Path


class Stop(BaseException):
    \"\"\"Stands for the power cut: not an error of the target, it stops the run.\"\"\"


def answer(text):
    if text == "stop" and Path({flag!r}).exists():
        raise Stop()
    return text
"""
SAMPLES = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(5)]
SAMPLES.append({"id": "last", "input": "stop", "expected": "stop"})


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """A run stopped at its last sample (five bundles on disk) and, for comparison, the
    results of the same spec run without a stop. The stopped run is written one event a
    line (the format before batches), so a cut can keep some of a trial's events and
    lose the rest, and its resume (batches) makes a run of both formats."""
    folder = tmp_path_factory.mktemp("power-cut")
    flag = folder / "stop"
    spec = unique_callable_spec(folder / "spec", STOPPING.format(flag=str(flag)), samples=SAMPLES)
    run_spec_at(spec, folder / "reference", max_concurrency=1)
    flag.write_text("")
    with pytest.raises(BaseException) as info, pytest.MonkeyPatch.context() as patch:
        patch.setattr(TrialRecorder, "batch_limit", 0)
        run_spec_at(spec, folder / "run", max_concurrency=1)
    assert "Stop" in repr(info.value)
    flag.unlink()
    return folder / "run", results_view(folder / "reference")


def lose_the_log_after(run: Path, bundle: int, kept: int) -> str:
    """Drop the end of events.jsonl: keep the first *kept* events of the trial of the
    *bundle*-th bundle (0-based), lose every event after them. Its trial id."""
    trial = read_jsonl(run / "bundles.jsonl")[bundle]["trial"]["trial_id"]
    lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if json.loads(line)["trial"] == trial)
    (run / "events.jsonl").write_bytes(b"".join(lines[: first + kept]))
    return trial


@pytest.mark.doc(
    "docs/evidence.md",
    "While a run goes on, lines reach the OS within 0.2 s but are not fsync'd one by one:",
    "If the log lost events that a kept bundle lists, `assay resume` cuts `bundles.jsonl`",
)
@pytest.mark.parametrize(("bundle", "kept"), [(4, 2), (1, 0), (1, 3)])
def test_a_bundle_whose_events_a_power_cut_lost_is_run_again(
    stopped: tuple[Path, dict[str, object]], tmp_path: Path, bundle: int, kept: int
) -> None:
    """The bundles after it (and every score line from the first of the cut trials) go
    too; the trials are run again, the rest judged again, and the run ends as an
    uninterrupted one does."""
    base, reference = stopped
    run = tmp_path / "run"
    shutil.copytree(base, run)
    kept_bundles = [b["trial"]["trial_id"] for b in read_jsonl(run / "bundles.jsonl")][:bundle]
    trial = lose_the_log_after(run, bundle, kept)
    assert not verify_run(run).ok  # a bundle lists events the log no longer has

    resumed = run_cli("resume", run)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert run_cli("verify", run).returncode == EXIT_PASSED
    assert results_view(run) == reference
    starts = trial_starts(run)
    assert starts[trial] == (2 if kept else 1)  # run again: its first start kept or lost
    for earlier in kept_bundles:
        assert starts[earlier] == 1, earlier  # never run again
    (event,) = [e for e in log_events(run) if e["type"] == "run_resumed"]
    assert any("whose events the log lost" in line for line in event["data"]["repaired"])


@pytest.mark.doc(
    "docs/evidence.md",
    "While a run goes on, lines reach the OS within 0.2 s but are not fsync'd one by one:",
)
def test_record_lines_are_not_fsynced_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty trials, each a few event lines, a bundle and a score: each record file is
    fsync'd once, when the run is sealed, not per line."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(50)]
    spec = unique_callable_spec(
        tmp_path / "spec", STOPPING.format(flag="/nonexistent"), samples=samples
    )
    run = tmp_path / "run"
    monkeypatch.setattr(os, "fsync", fsync)
    run_spec_at(spec, run)
    monkeypatch.undo()
    assert len(log_events(run)) > 200
    for name in ("events.jsonl", "bundles.jsonl", "scores.jsonl", "artifacts/pack-0001.bin"):
        assert synced.count(str((run / name).resolve())) == 1, (name, synced)
