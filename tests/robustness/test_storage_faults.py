"""Storage faults: a read-only output folder, a full disk, a run folder deleted mid-run.

The contract (docs/cli.md): the run cannot go on, so ``assay`` exits 5 with one line
saying where and why; and no run is left looking valid when it is not (``verify``
fails, or the manifest does not say ``complete``). A run stopped by a full disk is
finished by ``assay resume`` once there is space again.

How the faults are made (we run as root, and root ignores permission bits, so ``chmod``
proves nothing): a read-only *bind mount* of a folder and a tiny *tmpfs* (``mount -t
tmpfs -o size=...``) that fills up. Both need CAP_SYS_ADMIN; where mounting is not
permitted those tests skip, saying so. The one fault that needs no privilege, an output
path under a regular file (``mkdir`` fails with ENOTDIR), always runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import EXIT_EVIDENCE, EXIT_INCONCLUSIVE
from tests.helpers import (
    can_mount,
    error_line,
    finished_trials,
    held_spec,
    mount,
    results_view,
    run_cli,
    run_spec_at,
    simple_spec,
    start_cli,
    umount,
    wait_for,
)

TRIALS = 300

needs_mount = pytest.mark.skipif(
    not can_mount(), reason="mounting a tmpfs or a read-only bind needs root with CAP_SYS_ADMIN"
)


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("storage") / "spec"
    # trials from the tenth on wait while HOLD is set
    return held_spec(folder, TRIALS, held_from=10, pause=0.001)


@pytest.fixture(scope="module")
def reference(spec: Path) -> dict[str, object]:
    out = spec.parent.parent / "reference"
    proc = run_cli("run", spec, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return results_view(out)


def _status(run: Path) -> str | None:
    try:
        return str(json.loads((run / "manifest.json").read_bytes())["status"])
    except (OSError, ValueError, KeyError):
        return None


def assert_not_valid_looking(run: Path) -> None:
    """A run that did not finish must not pass for one that did: verify fails it (exit
    4), or says it is unfinished (exit 3, its manifest does not say ``complete``)."""
    verify = run_cli("verify", run)
    expected = EXIT_INCONCLUSIVE if _status(run) != "complete" else EXIT_EVIDENCE
    if verify.returncode != EXIT_EVIDENCE:  # damage found is exit 4 whatever the status
        assert verify.returncode == expected, verify.stdout + verify.stderr


# -- read-only ---------------------------------------------------------------------------


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder mounted read-only (a bind of itself): writes fail with EROFS, even for root."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "existing.txt").write_text("already here\n")
    mount("--bind", str(folder), str(folder))
    try:
        mount("-o", "remount,ro,bind", str(folder))
        yield folder
    finally:
        umount(folder)


@needs_mount
@pytest.mark.parametrize("where", ["inside", "itself"])
def test_a_read_only_output_folder_is_one_storage_error_line(
    spec: Path, read_only: Path, where: str
) -> None:
    out = read_only / "run" if where == "inside" else read_only
    proc = run_cli("run", spec, "-o", out)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    line = error_line(proc)
    assert str(out) in line and "Read-only file system" in line, line
    assert sorted(p.name for p in read_only.iterdir()) == ["existing.txt"]


@needs_mount
def test_resuming_a_run_in_a_read_only_folder_is_one_storage_error_line(
    spec: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    # one trial at a time, held after the tenth and killed: the run is surely unfinished
    proc = start_cli("run", spec, "-o", run, "-j", "1", env={"HOLD": str(tmp_path / "never")})
    assert wait_for(lambda: len(finished_trials(run)) > 0, timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert _status(run) == "running"
    before = {p.name: p.stat().st_size for p in run.iterdir()}
    mount("--bind", str(run), str(run))
    try:
        mount("-o", "remount,ro,bind", str(run))
        resumed = run_cli("resume", run)
    finally:
        umount(run)
    assert resumed.returncode == 5, resumed.stdout + resumed.stderr
    assert "Read-only file system" in error_line(resumed)
    assert {p.name: p.stat().st_size for p in run.iterdir()} == before  # untouched
    assert run_cli("resume", run).returncode == 0  # and once writable it finishes


def test_an_output_path_under_a_regular_file_is_one_storage_error_line(
    spec: Path, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    out = tmp_path / "a-file" / "run"
    proc = run_cli("run", spec, "-o", out)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "Not a directory" in error_line(proc)
    assert (tmp_path / "a-file").read_text() == "not a folder\n"


# -- disk full ---------------------------------------------------------------------------

# From the spec and plan (8k) through the event log to the reports and indexes (1150k):
# the whole run takes about 1.2 MB.
SIZES = ["8k", "64k", "256k", "768k", "1150k"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    yield folder
    umount(folder)


def _fill(spec: Path, disk: Path, size: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk))
    run = disk / "run"
    return run, run_cli("run", spec, "-o", run)


@needs_mount
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.doc(
    "docs/cli.md",
    "A storage error stops a run without a `stopped` report: the disk would fail those writes too.",
)
def test_a_full_disk_leaves_no_valid_looking_run_and_resume_finishes_it(
    spec: Path, small_disk: Path, size: str, reference: dict[str, object]
) -> None:
    run, proc = _fill(spec, small_disk, size)
    assert proc.returncode == 5, proc.stdout + proc.stderr  # storage error (docs/cli.md)
    assert_not_valid_looking(run)
    assert "gate: stopped" not in proc.stdout
    if (run / "report.json").exists():  # written before the disk filled, never "stopped"
        assert json.loads((run / "report.json").read_bytes())["gate"]["status"] != "stopped"
    mount("-o", "remount,size=64m", str(small_disk))  # space again
    resumed = run_cli("resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert run_cli("verify", run).returncode == 0
    assert results_view(run) == reference


@needs_mount
@pytest.mark.parametrize("size", SIZES)
def test_a_full_disk_is_one_storage_error_line(spec: Path, small_disk: Path, size: str) -> None:
    _, proc = _fill(spec, small_disk, size)
    assert proc.returncode == 5, proc.stderr
    assert "No space left on device" in error_line(proc)


# -- the run folder deleted while running ------------------------------------------------


def _delete_mid_run(spec: Path, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Delete the run folder while the run is held mid-way, then let it go on."""
    run, hold = tmp_path / "run", tmp_path / "hold"
    proc = start_cli("run", spec, "-o", run, "-j", "1", env={"HOLD": str(hold)})
    assert wait_for(lambda: len(finished_trials(run)) > 0, timeout=60)
    shutil.rmtree(run)
    hold.touch()  # the trials left run on, and find their folder gone
    out, err = proc.communicate(timeout=60)
    return run, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_run_folder_deleted_mid_run_leaves_nothing_valid_looking(
    spec: Path, tmp_path: Path
) -> None:
    run, proc = _delete_mid_run(spec, tmp_path)
    assert proc.returncode == 5, proc.stdout + proc.stderr  # a storage error, no gate decision
    assert "Traceback" not in proc.stderr
    assert_not_valid_looking(run)


def test_a_run_folder_deleted_mid_run_is_one_storage_error_line(spec: Path, tmp_path: Path) -> None:
    _, proc = _delete_mid_run(spec, tmp_path)
    assert proc.returncode == 5, proc.stderr
    error_line(proc)


@pytest.mark.doc(
    "docs/evidence.md",
    "A manifest says `complete` only once every file and folder of the run has been fsync'd",
)
def test_a_complete_manifest_is_written_only_after_every_file_reached_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Power cut, not kill -9: a page the OS held but had not written is lost. So every
    file of the run (and its folders) is fsync'd before the manifest says ``complete``,
    and the folder after its rename; otherwise resume would refuse a run whose lines
    were lost (it is complete) and verify would fail it."""
    synced: list[str] = []
    replaced: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real_replace(src, dst)
        replaced.append((str(dst), len(synced)))

    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(50)]
    spec = simple_spec(tmp_path / "spec", samples=samples)
    run = tmp_path / "run"
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    run_spec_at(spec, run)
    monkeypatch.undo()
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "complete"
    at = [n for dst, n in replaced if dst == str(run / "manifest.json")][-1]
    before = set(synced[:at])
    for path in [run, *run.rglob("*")]:
        if path.name != "manifest.json":
            assert str(path.resolve()) in before, path
    assert str(run.resolve()) in synced[at:]  # the rename of the manifest, made durable
