"""The event pass of ``verify`` in a worker process gives the same answer as in-process.

A large run's ``events.jsonl`` is walked by ``python -m assay.evidence._verify_worker``
while the verifying process checks the rest; these tests lower the size threshold so a
small run takes that path too, tamper with it, and compare both paths' findings.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from assay.evidence import _verify, _verify_events, verify_run
from tests.helpers import read_jsonl, write_module


def both_ways(run: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """verify's findings with the event pass in a worker and in this process."""
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 0)
    started: list[bool] = []
    start = _verify_events.start_scan

    def spy(path: Path, threshold: int, files: Sequence[str] = ()) -> object:
        worker = start(path, threshold, files)
        started.append(worker is not None)
        return worker

    monkeypatch.setattr(_verify, "start_scan", spy)
    in_worker = verify_run(run).problems
    assert started == [True], "the worker path was not taken"
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 1 << 60)
    monkeypatch.setattr(_verify, "start_scan", start)
    return in_worker, verify_run(run).problems


def test_untouched_run_verifies_in_a_worker(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here == []


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


def test_a_failed_worker_falls_back_to_this_process(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_verify, "PARALLEL_BYTES", 0)
    false = shutil.which("false")
    assert false is not None
    monkeypatch.setattr(_verify_events.sys, "executable", false)  # the worker exits 1
    here: list[str] = []
    scan = _verify_events.scan_events

    def spy(path: str, files: Sequence[str] = ()) -> _verify_events.EventScan:
        here.append(path)
        return scan(path, files)

    monkeypatch.setattr(_verify_events, "scan_events", spy)
    assert verify_run(run).ok
    assert here == [str(run)], "the event pass was not redone in this process"


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
