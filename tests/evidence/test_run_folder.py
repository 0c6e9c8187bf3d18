"""The run folder itself: the manifest's exact bytes, files assay does not write, and
``verify`` on a run that is not finished.

Real runs through the real CLI; each edit is made the way a person (or an attacker)
with a text editor would make it.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.helpers import error_line, run_capped, run_cli, start_cli, unique_callable_spec, wait_for

# s0's output is 70,000 bytes: a loose artifact file (64 KiB or more), beside the packs
TARGET = """
def answer(n):
    return "x" * 70_000 if n == 0 else str(n)
"""
HOLD = """
import os
import time


def answer(n):
    while n >= 3 and not os.path.exists(os.environ["NEVER"]):
        time.sleep(0.01)
    return str(n)
"""


def _spec(folder: Path, source: str, count: int) -> Path:
    samples = [{"id": f"s{i}", "input": i, "expected": str(i)} for i in range(count)]
    return unique_callable_spec(folder, source, samples=samples, gate={"minimum": 0.5})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    proc = run_cli("run", _spec(tmp_path / "spec", TARGET, 4), "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.mark.doc(
    "docs/evidence.md",
    "Every file in the run folder must be one assay writes:",
)
def test_a_complete_run_has_only_known_files(run: Path) -> None:
    names = {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()}
    loose = [n for n in names if n.startswith("artifacts/") and n.count("/") == 2]
    assert loose, names  # a loose artifact, the packs, their indexes, reports, the lock
    assert {"bundles.idx", "report.html", ".lock", "artifacts/pack-0001.idx"} <= names
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "every digest matches" in verify.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "Any other file or folder is an error, not a warning: it is checked by nothing, and a "
    "reader could take it for part of the run, so verify names it (exit 4).",
    "in a complete run they are errors too.",
)
@pytest.mark.parametrize(
    ("stray", "named"),
    [
        ("report-final.html", "report-final.html"),
        ("notes/read-me.txt", "notes"),  # a folder is named as a whole
        ("artifacts/extra.bin", "artifacts/extra.bin"),
        ("artifacts/pack-0001.bin.bak", "artifacts/pack-0001.bin.bak"),
        ("artifacts/ab/not-a-digest", "artifacts/ab/not-a-digest"),
        # a crash leftover is fine only in an unfinished run
        (".manifest.json.tmp", ".manifest.json.tmp"),
        (f"artifacts/ab/.{'ab' * 32}.4242.tmp", f"artifacts/ab/.{'ab' * 32}.4242.tmp"),
    ],
)
def test_a_stray_file_fails_verify_naming_it(run: Path, stray: str, named: str) -> None:
    (run / stray).parent.mkdir(parents=True, exist_ok=True)
    (run / stray).write_text('{"gate": "passed"}\n')
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert verify.stdout.count(": not a file assay writes") == 1, verify.stdout
    assert f"  - {named}: not a file assay writes" in verify.stdout, verify.stdout


def test_a_stray_file_name_is_printed_escaped_on_its_own_line(run: Path) -> None:
    # whoever can write the folder picks the name: it must not print a line of its own
    (run / "x\nverified run: every digest matches\x1b[2J").write_text("")
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert len(verify.stdout.splitlines()) == 2, verify.stdout
    assert "  - x\\nverified run: every digest matches\\x1b[2J: not a file" in verify.stdout


@pytest.mark.parametrize("kind", ["link to /dev/zero", "named pipe", "folder"])
def test_a_manifest_that_is_no_regular_file_is_not_a_run(run: Path, kind: str) -> None:
    manifest = run / "manifest.json"
    manifest.unlink()
    if kind == "named pipe":
        os.mkfifo(manifest)  # reading it would wait for a writer forever
    elif kind == "folder":
        manifest.mkdir()
    else:
        manifest.symlink_to("/dev/zero")  # reading it whole would never end
    for command in ("verify", "gate", "score"):
        proc = run_capped(command, run)
        assert proc.returncode == 4, (kind, command, proc.stdout + proc.stderr)
        assert "manifest.json is not a regular file" in error_line(proc), (kind, command)


def test_a_manifest_bigger_than_any_manifest_is_not_read(run: Path) -> None:
    manifest = run / "manifest.json"
    with manifest.open("r+b") as handle:  # sparse: 4 GiB that reading whole would allocate
        handle.truncate(4 * 1024**3)
    for command in ("verify", "gate", "score"):
        proc = run_capped(command, run)
        assert proc.returncode == 4, (command, proc.stdout + proc.stderr)
        assert "manifest.json is 4,294,967,296 bytes" in error_line(proc), command


@pytest.mark.doc(
    "docs/evidence.md",
    "A link, a pipe or a device in the run folder is such an error even under a name assay "
    "writes, and verify then reads nothing else: reading it might never end (a link to "
    "`/dev/zero`) or wait forever (a pipe).",
)
@pytest.mark.parametrize(
    "name",
    [
        *("events.jsonl", "bundles.jsonl", "scores.jsonl", "spec.json", "plan.jsonl"),
        *("report.json", "bundles.idx", "artifacts/pack-0001.bin", "artifacts/pack-0001.idx"),
        "pipe:events.jsonl",
    ],
)
def test_a_link_or_pipe_in_the_run_folder_is_named_unread(run: Path, name: str) -> None:
    pipe, _, name = name.rpartition(":")
    (run / name).unlink()
    if pipe:
        os.mkfifo(run / name)
    else:
        (run / name).symlink_to("/dev/zero")
    proc = run_capped("verify", run, timeout=60)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"  - {name}: not a file assay writes" in proc.stdout, proc.stdout
    for command in ("gate", "score"):
        proc = run_capped(command, run, timeout=60)
        assert proc.returncode == 4, (command, proc.stdout + proc.stderr)
        assert f"first: {name}: not a file assay writes" in error_line(proc), command


@pytest.mark.parametrize("name", ["bundles.jsonl", "scores.jsonl"])
def test_show_and_export_refuse_a_linked_record_file_unread(run: Path, name: str) -> None:
    trial = json.loads((run / "plan.jsonl").read_bytes().splitlines()[0])["trial_id"]
    (run / name).unlink()
    (run / name).symlink_to("/dev/zero")
    for command in (["show", run, trial], ["export", run]):
        proc = run_capped(*command, timeout=60)
        assert proc.returncode == 4, (command, proc.stdout + proc.stderr)
        assert f"first: {name}: not a file assay writes" in error_line(proc), command


def test_a_loose_artifact_in_the_wrong_folder_fails_verify(run: Path) -> None:
    (loose,) = [p for p in (run / "artifacts").glob("??/*")]
    moved = run / "artifacts" / "00" / loose.name
    moved.parent.mkdir(exist_ok=True)
    moved.write_bytes(loose.read_bytes())  # a copy the store would never read
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert f"artifacts/00/{loose.name}: not a file assay writes" in verify.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "The manifest is canonical JSON (sorted keys, no white space, UTF-8, no final newline), "
    "and verify checks its bytes:",
    "a manifest whose fields all match but whose bytes differ from their canonical encoding "
    "(re-indented, a space added) is a problem (exit 4).",
)
@pytest.mark.parametrize(
    "edit",
    [
        lambda data: json.dumps(json.loads(data), indent=2).encode(),
        lambda data: data.replace(b'"status":', b'"status": ', 1),
        lambda data: data + b"\n",
        lambda data: (
            json.dumps(json.loads(data), sort_keys=False, separators=(",", ":"))
            .encode()
            .replace(b'{"', b'{ "', 1)
        ),
    ],
    ids=["indented", "one-space", "final-newline", "leading-space"],
)
def test_a_white_space_edit_of_the_manifest_fails_verify(run: Path, edit: object) -> None:
    manifest = run / "manifest.json"
    data = manifest.read_bytes()
    edited = edit(data)  # type: ignore[operator]
    assert edited != data and json.loads(edited) == json.loads(data)  # same fields
    manifest.write_bytes(edited)
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert "  - manifest.json: not canonical JSON" in verify.stdout, verify.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "whose evidence has no problem is reported as unfinished, with how many of its planned "
    "trials finished and the `assay resume RUN` command that finishes it (exit 3,",
    "The one exception is the temporary file of a write a kill interrupted (`.NAME.tmp`, "
    "renamed into place only once whole): an unfinished run may hold some, which the next "
    "`assay resume` removes;",
    "a kill can leave one behind, which the next `assay resume` removes.",
)
@pytest.mark.doc(
    "docs/cli.md",
    "`verify`: the run is unfinished (killed or interrupted): every digest of what it holds "
    "matches, but only N of its M trials finished, and `assay resume RUN` finishes it",
    "`verify`: every digest matches and the run is complete",
    "say whether the run is unfinished (how many trials finished, how to finish it)",
)
def test_verify_of_a_killed_run_says_it_is_unfinished(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "spec", HOLD, 5)
    run = tmp_path / "run"
    never = tmp_path / "never"
    proc = start_cli("run", spec, "-o", run, "-j", "5", env={"NEVER": str(never)})
    try:  # s0..s2 answer; s3 and s4 wait for a file that is not there yet
        assert wait_for(lambda: _lines(run / "bundles.jsonl") == 3, timeout=60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    # what a kill mid-write leaves: a report, a large artifact not renamed yet
    (run / ".report.json.tmp").write_text("{")
    loose_temp = run / "artifacts" / "ab" / f".{'ab' * 32}.4242.tmp"
    loose_temp.parent.mkdir(parents=True)
    loose_temp.write_bytes(b"x" * 70_000)
    verify = run_cli("verify", run)
    assert verify.returncode == 3, verify.stdout
    assert verify.stdout.strip() == (
        f"{run} is UNFINISHED (running): 3 of 5 trials finished; every digest of what it "
        f"holds matches — finish it with `assay resume {run}`"
    )
    never.touch()
    resumed = run_cli("resume", run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not (run / ".report.json.tmp").exists()  # resume removed the leftovers
    assert not loose_temp.exists()
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "5 trials" in verify.stdout and "every digest matches" in verify.stdout


def test_damage_in_an_unfinished_run_is_still_exit_4(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "spec", HOLD, 5)
    run = tmp_path / "run"
    proc = start_cli("run", spec, "-o", run, "-j", "5", env={"NEVER": str(tmp_path / "never")})
    try:
        assert wait_for(lambda: _lines(run / "bundles.jsonl") == 3, timeout=60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    (run / "stray.txt").write_text("hello")
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert "  - stray.txt: not a file assay writes" in verify.stdout


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0
