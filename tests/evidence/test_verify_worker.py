"""The event pass of ``verify`` in a worker process gives the same answer as in-process.

A large run's ``events.jsonl`` is walked by ``python -m assay.evidence._verify_worker``
while the verifying process checks the rest; these tests lower the size threshold so a
small run takes that path too, tamper with it, and compare both paths' findings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from assay.evidence import _verify, _verify_events, verify_run
from tests.evidence._both_ways import verified_both_ways
from tests.helpers import read_jsonl, write_module


def both_ways(run: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """verify's findings with the event pass in a worker and in this process."""
    in_worker, here = verified_both_ways(
        run, monkeypatch, threshold="PARALLEL_BYTES", finish="finish_scan", what="event"
    )
    return in_worker.problems, here.problems


def exiting_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Make verify's worker a program that exits with *code* without answering."""
    script = tmp_path / f"exit{code}.sh"
    script.write_text(f"#!/bin/sh\nexit {code}\n")
    script.chmod(0o755)
    monkeypatch.setattr(_verify_events.sys, "executable", str(script))


@pytest.mark.doc(
    "docs/evidence.md",
    "On a large run (an `events.jsonl` of 16 MiB or more, about 9,000 trials) and a machine with",
)
def test_untouched_run_verifies_in_a_worker(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here == []


@pytest.mark.doc(
    "docs/evidence.md",
    "On a large run (an `events.jsonl` of 16 MiB or more, about 9,000 trials) and a machine with",
)
def test_a_changed_event_is_named_the_same_way(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = run / "events.jsonl"
    lines = events.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"n":', b'"n": ', 1)  # same record, other bytes
    events.write_bytes(b"\n".join(lines))
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here
    assert any("events.jsonl:5" in p for p in here), here  # the next line's link breaks
    assert any("bundles.jsonl" in p for p in here), here  # and the bundle listing it


def test_a_bundle_listing_other_events_is_named(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundles = run / "bundles.jsonl"
    first = read_jsonl(bundles)[0]
    n, digest = first["events"][0]
    data = bundles.read_bytes()
    wrong = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    bundles.write_bytes(data.replace(f'[{n},"{digest}"]'.encode(), f'[{n},"{wrong}"]'.encode(), 1))
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here
    assert any("bundles.jsonl:1 " in p for p in here), here


@pytest.mark.doc(
    "docs/evidence.md",
    "On a large run (an `events.jsonl` of 16 MiB or more, about 9,000 trials) and a machine with",
)
def test_a_failed_worker_falls_back_to_this_process(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 0)
    exiting_worker(tmp_path, monkeypatch, 3)
    here: list[str] = []
    scan = _verify_events.scan_events

    def spy(path: str, files: Sequence[str] = ()) -> _verify_events.EventScan:
        here.append(path)
        return scan(path, files)

    monkeypatch.setattr(_verify_events, "scan_events", spy)
    result = verify_run(run)
    assert result.ok, result.problems
    assert here == [str(run)], "the event pass was not redone in this process"
    assert result.notes == [
        "note: the event pass was redone in this process: the worker exited with code 3"
    ]


def test_the_comparison_fails_when_the_worker_fails(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker-vs-in-process tests cannot pass on the fallback's answer alone."""
    exiting_worker(tmp_path, monkeypatch, 3)
    with pytest.raises(AssertionError, match="did not come from the worker"):
        both_ways(run, monkeypatch)


def test_a_worker_that_cannot_start_is_noted(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(_verify_events.sys, "executable", str(tmp_path / "no-such-python"))
    result = verify_run(run)
    assert result.ok, result.problems
    assert len(result.notes) == 1, result.notes
    assert "redone in this process: the worker could not start" in result.notes[0]


@pytest.mark.doc(
    "docs/evidence.md",
    "if the worker cannot start or fails, the chain is walked in-process and verify says so",
    "It is not a problem with the evidence, so the exit code stays the same.",
)
def test_verify_names_the_fallback_and_still_exits_0(run: Path, tmp_path: Path) -> None:
    """The real CLI in a subprocess, its worker made to exit 3: an untouched run still
    verifies (exit 0, nothing on stdout but the verified line) and stderr says why the
    event pass was redone."""
    script = tmp_path / "exit3.sh"
    script.write_text("#!/bin/sh\nexit 3\n")
    script.chmod(0o755)
    program = (
        "import sys\n"
        "from assay.evidence import _verify\n"
        "from assay.cli._main import main\n"
        "_verify.PARALLEL_BYTES = 0\n"
        f"sys.executable = {str(script)!r}\n"
        f"main(['verify', {str(run)!r}])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "LANG": "C.UTF-8"},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("verified "), proc.stdout
    assert proc.stderr.splitlines() == [
        "note: the event pass was redone in this process: the worker exited with code 3"
    ], proc.stderr


def test_verify_says_nothing_more_when_the_worker_answers(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 0)
    assert verify_run(run).notes == []


@pytest.mark.doc(
    "docs/evidence.md",
    "On a large run (an `events.jsonl` of 16 MiB or more, about 9,000 trials) and a machine with",
)
def test_every_listed_file_is_hashed_by_one_pass_or_the_other(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plan, bundles and scores are hashed as this process reads them, the rest by the
    event pass: a wrong digest for any file the manifest lists is named either way."""
    manifest = run / "manifest.json"
    original = manifest.read_text()
    files = json.loads(original)["files"]
    assert {"plan.jsonl", "bundles.jsonl", "scores.jsonl", "report.json"} <= set(files)
    for name, digest in files.items():
        wrong = digest[:-1] + ("0" if digest[-1] != "0" else "1")
        manifest.write_text(original.replace(digest, wrong, 1))
        in_worker, here = both_ways(run, monkeypatch)
        assert in_worker == here
        named = [p for p in here if p.startswith(f"{name}: ")]
        assert len(named) == 1 and wrong in named[0], (name, here)
    manifest.write_text(original)


def test_a_file_not_read_line_by_line_is_still_hashed(run: Path) -> None:
    """With the spec unreadable the plan is never walked; its digest is checked anyway."""
    (run / "spec.json").write_text("{not json")
    (run / "plan.jsonl").write_bytes((run / "plan.jsonl").read_bytes() + b"\n")
    problems = verify_run(run).problems
    assert any(p.startswith("plan.jsonl: ") for p in problems), problems


@pytest.mark.doc(
    "docs/evidence.md",
    "given only the folders assay and msgspec were imported from, so no file on this "
    "process's `sys.path` or in the current folder can shadow a standard module in it",
)
@pytest.mark.parametrize("where", ["on sys.path", "the current folder"])
def test_a_numbers_py_on_sys_path_or_here_does_not_reach_the_worker(
    where: str, run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker gets the folders assay and msgspec came from, not this process's whole
    ``sys.path`` (nor the current folder): a stdlib-named file there would break it."""
    folder = tmp_path / "user_code"
    write_module(folder, "numbers", "raise ImportError('the standard numbers was shadowed')\n")
    if where == "on sys.path":
        monkeypatch.syspath_prepend(str(folder))
    else:
        monkeypatch.chdir(folder)
    worker = _verify_events.start_scan(run, 0)
    assert worker is not None, "the worker path was not taken"
    out, _ = worker.communicate()
    assert worker.returncode == 0
    scan = msgspec.msgpack.decode(out, type=_verify_events.EventScan)
    assert scan == _verify_events.scan_events(str(run))
