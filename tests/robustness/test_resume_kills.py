"""Crash: ``kill -9`` of ``assay resume`` itself, at many points of its life.

A resume rewrites files that were already there (the plan, the manifest) and removes or
writes others (reports, indexes). After each kill the run must still verify, as an
unfinished run (exit 3: nothing it holds is damaged), and the next resume must go on
from there; the last one finishes the run, which then verifies complete (exit 0).

Kill points are the run's own files, never a stopwatch: the plan being rewritten, the
manifest replaced, the event log grown, a number of new bundle lines, the reports or
the indexes of the seal appearing. A kill that comes after the resume ended is not
counted as a hit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import finished_trials, run_cli, start_cli, unique_callable_spec, wait_for

TRIALS = 400
TARGET = """
import asyncio


async def answer(n):
    await asyncio.sleep(0.02)
    return str(n) if n % 7 else "wrong"
"""


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return -1


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


def _status(run: Path) -> str:
    return str(json.loads((run / "manifest.json").read_bytes())["status"])


@dataclass
class Before:
    """The run's files as the resume about to be killed found them."""

    plan_size: int
    manifest_inode: int
    events_size: int
    bundles: int


Point = Callable[[Path, Before], bool]


def _plan_rewritten(run: Path, before: Before) -> bool:
    # the old code truncated plan.jsonl in place; the new one writes a temporary file
    return (run / ".plan.jsonl.tmp").exists() or _size(run / "plan.jsonl") < before.plan_size


def _more_bundles(count: int) -> Point:
    return lambda run, before: _lines(run / "bundles.jsonl") >= before.bundles + count


def _plan_replaced(run: Path, before: Before) -> bool:
    return _size(run / "plan.jsonl") == before.plan_size and not _plan_rewritten(run, before)


def _logged(kind: str) -> Point:
    """Once the event log's last 64 KiB hold an event of type *kind*."""
    marker = f'"type":"{kind}"'.encode()

    def point(run: Path, before: Before) -> bool:
        events = run / "events.jsonl"
        try:
            with open(events, "rb") as handle:
                handle.seek(max(0, _size(events) - 65_536))
                return marker in handle.read()
        except FileNotFoundError:
            return False

    return point


def _exists(name: str) -> Point:
    return lambda run, before: (run / name).exists()


POINTS: list[tuple[str, Point]] = [
    ("plan being rewritten", _plan_rewritten),
    ("plan replaced", _plan_replaced),
    (
        "manifest replaced",
        lambda run, before: _inode(run / "manifest.json") != before.manifest_inode,
    ),
    ("events grew", lambda run, before: _size(run / "events.jsonl") > before.events_size),
    ("1 more bundle", _more_bundles(1)),
    ("5 more bundles", _more_bundles(5)),
    ("10 more bundles", _more_bundles(10)),
    ("15 more bundles", _more_bundles(15)),
    ("25 more bundles", _more_bundles(25)),
    ("30 more bundles", _more_bundles(30)),
    ("40 more bundles", _more_bundles(40)),
    # sealing: judged, reported, indexed, then the manifest says complete
    ("metrics logged", _logged("metrics")),
    ("report.json written", _exists("report.json")),
    ("report.html written", _exists("report.html")),
    ("bundles.idx written", _exists("bundles.idx")),
]


def _kill_when(proc: subprocess.Popen[str], run: Path, point: Point, before: Before) -> bool:
    """SIGKILL *proc* once *point* holds; True if it was still running then."""
    wait_for(lambda: point(run, before) or proc.poll() is not None, timeout=60, step=0.001)
    running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return running and proc.returncode == -signal.SIGKILL


@pytest.fixture
def interrupted(tmp_path: Path) -> Path:
    """A run killed once with a quarter of its trials finished."""
    samples = [{"id": f"s{i:04d}", "input": i, "expected": str(i)} for i in range(TRIALS)]
    spec = unique_callable_spec(tmp_path / "spec", TARGET, samples=samples, gate={"minimum": 0.8})
    run = tmp_path / "run"
    proc = start_cli("run", spec, "-o", run, "-j", "2")
    _kill_when(proc, run, _more_bundles(TRIALS // 4), Before(0, -1, 0, 0))
    assert _status(run) == "running"
    return run


@pytest.mark.doc(
    "docs/evidence.md",
    "A resume writes the new `plan.jsonl` to a temporary file in the run folder",
)
@pytest.mark.doc(
    "docs/cli.md",
    "`verify`: the run is unfinished (killed or interrupted)",
)
def test_a_resume_killed_at_any_point_leaves_a_run_that_verifies_and_resumes(
    interrupted: Path,
) -> None:
    run = interrupted
    hits: list[str] = []
    for name, point in POINTS:
        if _status(run) == "complete":
            break  # a kill came after the run was sealed: nothing left to kill
        before = Before(
            _size(run / "plan.jsonl"),
            _inode(run / "manifest.json"),
            _size(run / "events.jsonl"),
            _lines(run / "bundles.jsonl"),
        )
        proc = start_cli("resume", run, "-j", "2")
        hit = _kill_when(proc, run, point, before)
        status = _status(run)
        if hit and status != "complete":
            hits.append(name)
        verify = run_cli("verify", run)
        if status == "complete":
            assert verify.returncode == 0, (name, verify.stdout)
            continue
        # consistent, and said to be unfinished, with how to finish it
        assert verify.returncode == 3, (name, verify.stdout)
        finished = len(finished_trials(run))
        assert f"{finished} of {TRIALS} trials finished" in verify.stdout, (name, verify.stdout)
        assert f"assay resume {run}" in verify.stdout, verify.stdout
    print(f"\nresume kill points that hit a running resume: {len(hits)}: {hits}")
    assert len(hits) >= 10, hits
    if _status(run) != "complete":
        resumed = run_cli("--debug", "resume", run, "-j", "2")
        assert resumed.returncode == 0, resumed.stderr
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert f"{TRIALS} bundles, {TRIALS} scores" in verify.stdout, verify.stdout
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]
    assert os.path.getsize(run / "plan.jsonl") > 0


def test_a_seal_cut_short_after_the_log_closed_is_unfinished_and_resume_seals_it(
    tmp_path: Path,
) -> None:
    """The window between the closing event and the manifest's replacement: a kill there
    leaves the manifest ``running`` (as the resume wrote it) over a log whose last run
    event is ``run_finished``. Nothing is damaged: verify says unfinished (exit 3), and
    resume seals it again. Made here without a kill, by putting that manifest back."""
    samples = [{"id": f"s{i}", "input": i, "expected": str(i)} for i in range(6)]
    spec = unique_callable_spec(tmp_path / "spec", TARGET, samples=samples, gate={"minimum": 0.5})
    run = tmp_path / "run"
    assert run_cli("run", spec, "-o", run).returncode == 0
    manifest = json.loads((run / "manifest.json").read_bytes())
    manifest["status"] = "running"
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    (run / "manifest.json").write_text(canonical, encoding="utf-8")

    verify = run_cli("verify", run)
    assert verify.returncode == 3, verify.stdout
    assert f"assay resume {run}" in verify.stdout, verify.stdout
    assert run_cli("resume", run).returncode == 0
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert _status(run) == "complete"
