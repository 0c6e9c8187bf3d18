"""The pack pass of ``verify`` in a worker process gives the same answer as in-process.

A large run's packs are hashed by ``python -m assay.evidence._verify_packs`` while the
verifying process checks the plan, bundles and scores (the bundles' artifacts are looked
up once the pack pass has answered); these tests lower the size threshold so a small run
takes that path too, tamper with it, and compare both paths' findings.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evidence import VerifyResult, _verify, _verify_events, verify_run
from tests.evidence._both_ways import verified_both_ways
from tests.helpers import edit_artifact, read_jsonl


def both_ways(run: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """verify's findings with the pack pass in a worker and in this process."""
    in_worker, here = verified_both_ways(
        run, monkeypatch, threshold="PACK_BYTES", finish="finish_packs", what="pack"
    )
    assert here.artifacts == in_worker.artifacts > 0
    return in_worker.problems, here.problems


@pytest.mark.doc(
    "docs/evidence.md",
    "When a run's packs hold 16 MiB or more (all together), their records are hashed in a",
)
def test_untouched_run_verifies_with_the_packs_in_a_worker(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here == []


@pytest.mark.doc(
    "docs/evidence.md",
    "When a run's packs hold 16 MiB or more (all together), their records are hashed in a",
)
def test_a_changed_artifact_is_named_the_same_way(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose bytes no longer match its header: named at its pack offset, and
    every bundle and event naming it then misses it."""
    sha = str(read_jsonl(run / "bundles.jsonl")[0]["artifacts"]["sample"])
    edit_artifact(run, sha, lambda data: data[:-1] + (b"x" if data[-1:] != b"x" else b"y"))
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here
    assert any(p.startswith("artifacts/pack-") and sha in p for p in here), here
    assert any(p.startswith("bundles.jsonl:1 ") and sha in p for p in here), here


def test_missing_packs_are_named_by_every_bundle(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No packs: nothing to hash, and each bundle names the artifacts it misses (the
    bundles' look-ups wait for the pack pass, whichever process ran it)."""
    shutil.rmtree(run / "artifacts")
    problems = verify_run(run).problems
    bundles = len(read_jsonl(run / "bundles.jsonl"))
    named = {p.split(" (trial")[0] for p in problems if "bundles.jsonl:" in p}
    assert len(named) == bundles > 0, problems
    monkeypatch.setattr(_verify, "PACK_BYTES", 0)
    assert verify_run(run).problems == problems


@pytest.mark.doc(
    "docs/evidence.md",
    "If it cannot start or fails, the packs are hashed in-process and verify says so",
)
def test_a_failed_pack_worker_is_redone_here_and_noted(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = verified_by_a_fake_worker(run, tmp_path, monkeypatch, "exit 3")
    assert result.notes == [
        "note: the artifact pass was redone in this process: the worker exited with code 3"
    ]


def verified_by_a_fake_worker(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shell: str
) -> VerifyResult:
    """verify with its pack worker replaced by a shell script running *shell*: the run
    verifies all the same (the pass redone in-process)."""
    monkeypatch.setattr(_verify, "PACK_BYTES", 0)
    script = tmp_path / "worker.sh"
    script.write_text(f"#!/bin/sh\n{shell}\n")
    script.chmod(0o755)
    monkeypatch.setattr(_verify_events.sys, "executable", str(script))
    result = verify_run(run)
    assert result.ok, result.problems
    assert result.artifacts > 0
    return result


def test_the_pack_worker_yields_to_the_event_pass(run: Path) -> None:
    """Three processes share two cores; the event pass decides when verify ends, so the
    pack worker runs niced (in the time the others leave)."""
    import os

    from assay.evidence._verify_packs import PACK_NICENESS, finish_packs, start_packs

    worker = start_packs(run, 0)
    assert worker is not None and not isinstance(worker, str)
    try:
        niceness = os.getpriority(os.PRIO_PROCESS, worker.pid)
    finally:
        scan = finish_packs(run, worker)
    assert niceness == min(19, os.getpriority(os.PRIO_PROCESS, 0) + PACK_NICENESS)
    assert scan.in_worker and not scan.findings


@pytest.mark.doc(
    "docs/evidence.md",
    "When a run's packs hold 16 MiB or more (all together), their records are hashed in a",
)
def test_the_pack_worker_hashes_the_listed_files_the_event_pass_did(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listed files nothing else reads (indexes, reports) are hashed by the pack
    worker when there is one (the event pass is the longer): an edited report is named
    the same way whichever process hashed it."""
    from assay.evidence._verify_packs import finish_packs, start_packs

    files = ["report.md", "nothing-here.txt"]
    scan = finish_packs(run, start_packs(run, 0, files), files)
    assert scan.in_worker
    expected = "sha256:" + hashlib.sha256((run / "report.md").read_bytes()).hexdigest()
    assert scan.file_digests == {"report.md": expected, "nothing-here.txt": None}
    report = run / "report.md"
    report.write_bytes(report.read_bytes().replace(b"#", b"=", 1))
    in_worker, here = both_ways(run, monkeypatch)
    assert in_worker == here
    assert [p for p in here if p.startswith("report.md: ")], here


def test_the_pack_worker_imports_no_msgspec() -> None:
    """The pack worker needs none of msgspec (its import is ~20 ms of CPU): it answers
    by ``marshal``, and the verifying process checks the answer's shape."""
    code = "import sys, assay.evidence._verify_packs_worker; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert "'assay.evidence._verify_pack'" in out.stdout, out.stderr
    assert "msgspec" not in out.stdout


def test_a_pack_worker_answer_of_the_wrong_shape_is_redone_here(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer that is not the pack pass's (here: a marshalled string) is not taken."""
    result = verified_by_a_fake_worker(run, tmp_path, monkeypatch, "printf 'u\\003\\0\\0\\0abc'")
    assert len(result.notes) == 1
    redone = "note: the artifact pass was redone in this process: the worker's answer could"
    assert result.notes[0].startswith(redone), result.notes
