"""Interrupt: SIGINT (Ctrl-C) and SIGTERM to a real ``assay run``, then resume.

One signal: the in-flight trials are cancelled and recorded as cancelled, the run is
sealed ``interrupted``, stderr carries one line with the resume command, the exit code
is 130 (docs/cli.md). A second signal stops the process at once; resume still repairs
whatever state it left and finishes with the results of an uninterrupted run.

The target hangs (and drops a marker file per hanging sample) only when the environment
says so, which is not part of the spec: the interrupted run and its resume run the very
same spec, and the resume does not hang. A blocked sync target drops a second marker
when its sleep ends, so "the process did not wait for it" is checked by that marker's
absence when the process is gone, not by a stopwatch.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers import (
    error_line,
    finished_trials,
    log_events,
    results_view,
    run_cli,
    start_cli,
    trial_starts,
    unique_callable_spec,
    wait_for,
)

SAMPLES = 12
JOBS = 4
HANGING = {2, 3, 4, 5}  # with -j 4: s0 and s1 answer, then these four hang

TARGET = """
import asyncio
import os
import pathlib
import time


def _hang(n):
    marks = os.environ.get("HANG_MARKS")
    if marks and n >= 2:
        pathlib.Path(marks, str(n)).touch()
        return True
    return False


async def answer(n):
    if _hang(n):
        await asyncio.sleep(60)
    return str(n) if n % 3 else "wrong"


def blocking(n):
    # A sync target: it runs in a worker thread, which cancellation cannot stop.
    if _hang(n):
        time.sleep(20)
        pathlib.Path(os.environ["HANG_MARKS"] + "-woke", str(n)).touch()
    return str(n) if n % 3 else "wrong"
"""

SIGNALS = [pytest.param(signal.SIGINT, id="SIGINT"), pytest.param(signal.SIGTERM, id="SIGTERM")]


def _spec(folder: Path, function: str) -> Path:
    samples = [{"id": f"s{i:02d}", "input": i, "expected": str(i)} for i in range(SAMPLES)]
    return unique_callable_spec(folder, TARGET, function, samples=samples)


@pytest.fixture(scope="module")
def async_spec(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    folder = tmp_path_factory.mktemp("interrupt-async")
    spec = _spec(folder / "spec", "answer")
    proc = run_cli("run", spec, "-o", folder / "reference")
    assert proc.returncode == 1, proc.stderr  # every third answer is wrong
    return spec, results_view(folder / "reference")


@pytest.fixture(scope="module")
def blocking_spec(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    folder = tmp_path_factory.mktemp("interrupt-sync")
    spec = _spec(folder / "spec", "blocking")
    proc = run_cli("run", spec, "-o", folder / "reference")
    assert proc.returncode == 1, proc.stderr
    return spec, results_view(folder / "reference")


def _start_hanging(command: str, target: Path, run: Path, marks: Path) -> subprocess.Popen[str]:
    """Start ``run``/``resume`` with the hanging target; return once all four hang."""
    for folder in (marks, _woke_folder(marks)):
        folder.mkdir(exist_ok=True)
        for mark in folder.iterdir():
            mark.unlink()
    args = ("run", target, "-o", run) if command == "run" else ("resume", run)
    proc = start_cli(*args, "-j", str(JOBS), env={"HANG_MARKS": str(marks)})
    hanging = lambda: {int(p.name) for p in marks.iterdir()} >= HANGING  # noqa: E731
    if not wait_for(hanging, timeout=30):
        proc.kill()
        pytest.fail(f"the target never hung: {proc.communicate()}")
    return proc


def _woke_folder(marks: Path) -> Path:
    return marks.parent / (marks.name + "-woke")


def _woke(marks: Path) -> list[str]:
    """The blocked sync targets whose 20 s sleep ended (their process was still there)."""
    return sorted(p.name for p in _woke_folder(marks).iterdir())


def _status(run: Path) -> str:
    return str(json.loads((run / "manifest.json").read_bytes())["status"])


def _hanging_trials(run: Path) -> set[str]:
    return {
        e["trial"]
        for e in log_events(run)
        if e["type"] == "trial_started" and int(e["data"]["sample_id"][1:]) in HANGING
    }


def _assert_interrupted(proc: subprocess.Popen[str], run: Path) -> None:
    """Exit 130, one stderr line with the resume hint, in-flight trials cancelled."""
    out, err = proc.communicate(timeout=30)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert proc.returncode == 130, (proc.returncode, err)
    line = error_line(done)
    assert f"assay resume {run}" in line, line
    assert _status(run) == "interrupted"
    events = log_events(run)
    assert events[-1]["type"] == "run_interrupted"
    hanging = _hanging_trials(run)
    assert len(hanging) == len(HANGING)
    for trial in hanging:
        mine = [e for e in events if e["trial"] == trial]
        # the latest try of each in-flight trial: one attempt, cancelled; the trial invalid
        last_try = mine[max(i for i, e in enumerate(mine) if e["type"] == "trial_started") :]
        finished = [e["data"] for e in last_try if e["type"] == "attempt_finished"]
        assert finished == [{"attempt": 1, "status": "cancelled"}], finished
        (summary,) = [e["data"] for e in last_try if e["type"] == "trial_finished"]
        assert summary["state"] == "invalid"
    assert not hanging & finished_trials(run)  # cancelled trials get no bundle
    verify = run_cli("verify", run)
    # an interrupted run is consistent, and verify says it is unfinished (exit 3)
    assert verify.returncode == 3, verify.stdout
    assert "UNFINISHED (interrupted)" in verify.stdout, verify.stdout


def _assert_resumed_equal(run: Path, reference: dict[str, object]) -> None:
    resumed = run_cli("resume", run)
    assert resumed.returncode == 1, resumed.stderr  # the gate fails, as uninterrupted
    assert _status(run) == "complete"
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert results_view(run) == reference


@pytest.mark.parametrize("sig", SIGNALS)
@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
    "An unfinished trial's earlier events stay in the log; its re-run continues their numbering",
)
def test_a_signal_cancels_in_flight_trials_and_resume_finishes(
    sig: signal.Signals, async_spec: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    spec, reference = async_spec
    run, marks = tmp_path / "run", tmp_path / "marks"
    proc = _start_hanging("run", spec, run, marks)
    finished_before = finished_trials(run)
    proc.send_signal(sig)
    _assert_interrupted(proc, run)
    kept = finished_trials(run)
    assert len(kept) == 2 and kept >= finished_before  # s0 and s1 were kept

    # interrupted again, this time while resuming
    proc = _start_hanging("resume", spec, run, marks)
    proc.send_signal(sig)
    _assert_interrupted(proc, run)
    resumed = [e for e in log_events(run) if e["type"] == "run_resumed"]
    assert len(resumed) == 1

    _assert_resumed_equal(run, reference)
    starts = trial_starts(run)
    for trial in kept:
        assert starts[trial] == 1  # never run again
    for trial in _hanging_trials(run):
        assert starts[trial] == 3  # cancelled twice, then finished
        started = [
            e for e in log_events(run) if e["trial"] == trial and e["type"] == "trial_started"
        ]
        assert [e["data"].get("resumed", False) for e in started] == [False, True, True]


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_second_signal_stops_at_once_and_resume_still_finishes(
    sig: signal.Signals, blocking_spec: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    spec, reference = blocking_spec
    run, marks = tmp_path / "run", tmp_path / "marks"
    proc = _start_hanging("run", spec, run, marks)
    proc.send_signal(sig)
    # sealed, but still waiting for the blocked worker threads: the user presses again
    assert wait_for(lambda: _status(run) == "interrupted", timeout=10)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert _woke(marks) == [], "the process waited for its blocked threads"
    assert proc.returncode == 130, (proc.returncode, err)  # the stop-at-once handler's code
    _assert_resumed_equal(run, reference)


@pytest.mark.parametrize("sig", SIGNALS)
def test_two_signals_back_to_back_leave_a_resumable_run(
    sig: signal.Signals, async_spec: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    spec, reference = async_spec
    run, marks = tmp_path / "run", tmp_path / "marks"
    proc = _start_hanging("run", spec, run, marks)
    proc.send_signal(sig)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    assert proc.returncode == 130, proc.returncode  # the stop-at-once handler, never -sig
    _assert_resumed_equal(run, reference)


def test_one_signal_ends_the_process_promptly_with_a_blocked_sync_target(
    blocking_spec: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    spec, _ = blocking_spec
    run, marks = tmp_path / "run", tmp_path / "marks"
    proc = _start_hanging("run", spec, run, marks)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    # gone before the blocked threads' 20 s sleeps ended: it did not wait for them
    assert _woke(marks) == [], "the process waited for its blocked threads"
    assert proc.returncode == 130


def test_a_second_ctrl_c_prints_one_line_and_no_traceback(
    blocking_spec: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    spec, _ = blocking_spec
    run, marks = tmp_path / "run", tmp_path / "marks"
    proc = _start_hanging("run", spec, run, marks)
    proc.send_signal(signal.SIGINT)
    assert wait_for(lambda: _status(run) == "interrupted", timeout=10)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    error_line(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
