"""Two writers: a second ``assay run`` or ``resume`` into a run directory in use refuses.

The run directory has one writer, held by a lock for the whole run. Whoever comes second
(another ``run`` started at the same instant or later, a ``resume`` while the run is
going, two ``resume``s of one crashed run) exits 5 with one line and writes nothing;
the run that holds the lock finishes undisturbed: one ``run_started``, every trial once,
``verify`` passes and the results equal an uninterrupted run.

The target answers samples 0-9 at once and makes the others wait for a "release" file
(named by an environment variable, not the spec), so a run can be held open for exactly
as long as a test needs.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from assay.errors import RunError
from assay.pipeline import RunOptions, execute_run, prepare_for_resume
from tests.helpers import (
    error_line,
    finished_trials,
    log_events,
    read_jsonl,
    results_view,
    run_cli,
    start_cli,
    unique_callable_spec,
    wait_for,
)

TRIALS = 40
TARGET = """
import asyncio
import os
import pathlib


async def answer(n):
    release = os.environ.get("RELEASE")
    if release and n >= 10:
        while not pathlib.Path(release).exists():
            await asyncio.sleep(0.01)
    return str(n) if n % 4 else "wrong"
"""
REFUSALS = ("is in use by another assay process", "already holds a run")


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("writers") / "spec"
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(TRIALS)]
    return unique_callable_spec(folder, TARGET, samples=samples, gate={"minimum": 0.7})


@pytest.fixture(scope="module")
def reference(spec: Path) -> tuple[Path, dict[str, object]]:
    out = spec.parent.parent / "reference"
    proc = run_cli("run", spec, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out, results_view(out)


def _held(command: tuple[str, ...], release: Path) -> subprocess.Popen[str]:
    return start_cli(*command, env={"RELEASE": str(release)})


def _finish(proc: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_refused(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 5, (proc.returncode, proc.stdout, proc.stderr)
    line = error_line(proc)
    assert any(refusal in line for refusal in REFUSALS), line


def assert_one_clean_run(run: Path, reference: tuple[Path, dict[str, object]]) -> None:
    """Nothing interleaved: one writer's evidence, whole, equal to an uninterrupted run."""
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    events = read_jsonl(run / "events.jsonl")  # lines: seq numbers them
    assert [e["seq"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events if e["trial"] is None]
    assert kinds.count("run_started") + kinds.count("run_resumed") == 1, kinds
    assert len(read_jsonl(run / "plan.jsonl")) == TRIALS
    assert len(read_jsonl(run / "bundles.jsonl")) == TRIALS
    assert sorted(p.name for p in run.iterdir()) == sorted(p.name for p in reference[0].iterdir())
    assert results_view(run) == reference[1]


@pytest.mark.parametrize("round_", range(4))
def test_two_runs_started_at_once_one_refuses(
    spec: Path, tmp_path: Path, reference: tuple[Path, dict[str, object]], round_: int
) -> None:
    run, release = tmp_path / "run", tmp_path / "release"
    first = _held(("run", spec, "-o", run), release)
    second = _held(("run", spec, "-o", run), release)
    # the loser gives up at once, while the winner is held
    assert wait_for(lambda: first.poll() is not None or second.poll() is not None, timeout=30)
    loser, winner = (first, second) if first.poll() is not None else (second, first)
    assert winner.poll() is None
    release.touch()
    assert_refused(_finish(loser))
    done = _finish(winner)
    assert done.returncode == 0, done.stderr
    assert_one_clean_run(run, reference)


@pytest.mark.parametrize("second", ["run", "resume"])
def test_a_second_writer_while_a_run_is_going_refuses(
    spec: Path, tmp_path: Path, reference: tuple[Path, dict[str, object]], second: str
) -> None:
    run, release = tmp_path / "run", tmp_path / "release"
    first = _held(("run", spec, "-o", run), release)
    # well inside the run: the manifest is written, trials are waiting for the release
    assert wait_for(lambda: len(finished_trials(run)) == 10, timeout=30)
    command = ("run", spec, "-o", run) if second == "run" else ("resume", run)
    assert_refused(run_cli(*command))
    assert first.poll() is None  # undisturbed
    release.touch()
    done = _finish(first)
    assert done.returncode == 0, done.stderr
    assert_one_clean_run(run, reference)


def _crashed(spec: Path, run: Path, release: Path) -> None:
    """A run killed with the ten quick trials finished and the rest waiting.

    It waits for those bundles, not for a time: ``plan.jsonl`` is opened before the
    manifest is written, so on a slow machine a fixed pause could kill the run before
    it had a manifest (what CI once saw)."""
    proc = _held(("run", spec, "-o", run), release)
    assert wait_for(lambda: len(finished_trials(run)) == 10, timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "running"


@pytest.mark.doc(
    "docs/evidence.md",
    "After a crash or `kill -9`, `assay resume RUN` takes the run's lock, cuts a half-written last",
)
def test_two_resumes_of_one_crashed_run_one_refuses(
    spec: Path, tmp_path: Path, reference: tuple[Path, dict[str, object]]
) -> None:
    run, release = tmp_path / "run", tmp_path / "release"
    _crashed(spec, run, release)
    first = _held(("resume", str(run)), release)
    second = _held(("resume", str(run)), release)
    assert wait_for(lambda: first.poll() is not None or second.poll() is not None, timeout=30)
    loser, winner = (first, second) if first.poll() is not None else (second, first)
    release.touch()
    assert_refused(_finish(loser))
    assert _finish(winner).returncode == 0
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    kinds = [e["type"] for e in log_events(run) if e["trial"] is None]
    assert kinds.count("run_resumed") == 1, kinds
    assert len(finished_trials(run)) == TRIALS
    assert results_view(run) == reference[1]


def test_a_resume_that_lost_the_race_does_not_resume_a_complete_run(
    spec: Path, tmp_path: Path
) -> None:
    run, release = tmp_path / "run", tmp_path / "release"
    _crashed(spec, run, release)
    late = prepare_for_resume(run)  # reads the manifest: status "running"
    assert run_cli("resume", run).returncode == 0  # meanwhile another resume finishes it
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "complete"
    with pytest.raises(RunError):
        anyio.run(lambda: execute_run(late, RunOptions(output=run), resume=True))
