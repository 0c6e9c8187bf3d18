"""Compacted evidence: a sealed run's big files as zstd frames (``NAME.zst``).

Real runs through the real CLI, with the compaction threshold lowered to one byte
(``ASSAY_COMPACT_BYTES``, private, read at seal) so a run of a few trials is compacted
as a 100,000-trial one is. Every reader goes through one reader (``open_evidence``);
the commands below are those that read a run's records.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from assay.evidence._framed import compact, framed
from assay.evidence._index import write_bundle_index
from tests.helpers import read_jsonl, run_cli, start_cli, unique_callable_spec, wait_for

COMPACT = {"ASSAY_COMPACT_BYTES": "1"}
RECORD_FILES = ("plan.jsonl", "events.jsonl", "bundles.jsonl", "scores.jsonl")
TARGET = """
def answer(n):
    return str(n)
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


@pytest.fixture(scope="module")
def compacted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete run, sealed with every record file and pack compacted (not to be
    changed: copy it)."""
    folder = tmp_path_factory.mktemp("compacted")
    out = folder / "run"
    proc = run_cli("run", _spec(folder / "spec", TARGET, 6), "-o", out, env=COMPACT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture
def run(compacted_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(compacted_run, copy)
    return copy


def _zstdcat(path: Path) -> bytes:
    return subprocess.run(["zstdcat", path], capture_output=True, check=True).stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "is rewritten as `NAME.zst`",
    "`zstdcat NAME.zst` prints the file",
    "every digest, offset and index names the uncompressed bytes",
)
def test_a_compacted_run_holds_zst_files_whose_bytes_the_manifest_digests(run: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_bytes())
    for name in RECORD_FILES:
        assert not (run / name).exists() and framed(run / name).is_file(), name
    for name in ("plan.jsonl", "bundles.jsonl", "scores.jsonl"):  # what an auditor does
        digest = "sha256:" + hashlib.sha256(_zstdcat(framed(run / name))).hexdigest()
        assert digest == manifest["files"][name], name
    assert (run / "artifacts" / "pack-0001.bin.zst").is_file()
    assert not (run / "artifacts" / "pack-0001.bin").exists()
    last = _zstdcat(framed(run / "events.jsonl")).splitlines()[-1]
    assert hashlib.sha256(last).hexdigest() == manifest["events_head"]
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "6 trials" in verify.stdout and "every digest matches" in verify.stdout


@pytest.mark.doc("docs/evidence.md", "smaller files stay plain")
def test_a_small_run_stays_plain(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", _spec(tmp_path / "spec", TARGET, 3), "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not list(out.rglob("*.zst"))
    assert all((out / name).is_file() for name in RECORD_FILES)


def test_every_command_reads_a_compacted_run(run: Path, tmp_path: Path) -> None:
    last = read_jsonl(run / "bundles.jsonl")[-1]["trial"]
    trial = last["trial_id"]
    for args, code in (
        (("score", run), 0),
        (("gate", run), 0),
        (("show", run, trial), 0),
        (("show", run, "s5", "--json"), 0),
        (("compare", run, run), 0),
    ):
        proc = run_cli(*args)
        assert proc.returncode == code, (args, proc.stdout + proc.stderr)
    shown = run_cli("show", run, trial)
    assert f"sample {last['sample_id']}" in shown.stdout, shown.stdout
    assert "matches its digest" in shown.stdout, shown.stdout
    out = tmp_path / "rows.jsonl"
    exported = run_cli("export", run, "--format", "jsonl", "-o", out)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    assert len(out.read_bytes().splitlines()) == 6


def test_the_viewer_reads_a_compacted_run(run: Path) -> None:
    from assay.view._table import TrialTable
    from tests.view._support import served

    table = TrialTable(run)
    assert table.problems == []
    assert [table.row(at).state for at in range(len(table))] == ["completed"] * 6
    trial = table.trial_ids[-1]
    with served(run.parent) as client:
        assert client.get("/").status_code == 200
        assert wait_for(lambda: 'id="building"' not in client.get("/runs/run/trials").text)
        page = client.get("/runs/run/trials").text
        assert trial in page and "does not match" not in page
        shown = client.get(f"/runs/run/trials/{trial}")
        assert shown.status_code == 200 and "s5" in shown.text


@pytest.mark.doc(
    "docs/evidence.md",
    "a changed byte in a `.zst` file or its seek table is a problem naming the file",
)
@pytest.mark.parametrize("name", ["bundles.jsonl", "events.jsonl", "artifacts/pack-0001.bin"])
def test_a_changed_byte_in_a_frame_fails_verify_naming_the_file(run: Path, name: str) -> None:
    path = framed(run / name)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x40  # inside the first frame's compressed bytes
    path.write_bytes(bytes(data))
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert f"{name.split('/')[-1]}" in verify.stdout, verify.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "`show` and `export` stop at a frame that does not read back with one line naming the "
    "file (exit 4)",
)
@pytest.mark.parametrize("name", ["bundles.jsonl", "scores.jsonl", "artifacts/pack-0001.bin"])
def test_a_changed_frame_is_exit_4_in_one_line_for_show_and_export(run: Path, name: str) -> None:
    trial = read_jsonl(run / "bundles.jsonl")[0]["trial"]["trial_id"]
    path = framed(run / name)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x40
    path.write_bytes(bytes(data))
    for args in (("show", run, trial), ("export", run, "-o", run.parent / "rows.csv")):
        proc = run_cli(*args)
        assert proc.returncode == 4, (args, proc.stdout + proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert f"{path.name}: frame 0 does not decompress" in line, line


@pytest.mark.doc("docs/evidence.md", "and the viewer's pages say which file changed")
def test_the_viewer_names_a_changed_frame(run: Path) -> None:
    from tests.view._support import served, verified_page

    path = framed(run / "scores.jsonl")
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x40
    path.write_bytes(bytes(data))
    with served(run.parent) as client:
        page = verified_page(client, "/runs/run/")
        assert page.status_code == 200 and "scores.jsonl.zst: frame 0" in page.text
        trials = client.get("/runs/run/trials")
        assert trials.status_code == 409 and "scores.jsonl.zst: frame 0" in trials.text


@pytest.mark.parametrize("name", ["scores.jsonl", "events.jsonl"])
def test_a_seek_table_that_lies_fails_verify(run: Path, name: str) -> None:
    path = framed(run / name)
    data = bytearray(path.read_bytes())
    # the last entry's decompressed size sits 9 + 4 bytes from the end (footer, then it)
    at = len(data) - 9 - 4
    (size,) = struct.unpack_from("<I", data, at)
    struct.pack_into("<I", data, at, size + 1)
    path.write_bytes(bytes(data))
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert f"{name}.zst: frame 0 is not what its seek table says" in verify.stdout


def test_a_plain_copy_beside_a_zst_in_a_sealed_run_fails_verify(run: Path) -> None:
    (run / "scores.jsonl").write_bytes(_zstdcat(framed(run / "scores.jsonl")))
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert "  - scores.jsonl.zst: not a file assay writes" in verify.stdout, verify.stdout


def test_records_and_lines_straddling_frames_read_and_verify(tmp_path: Path) -> None:
    """Frames of 1,000 bytes (1 MiB at seal): nearly every line and pack record starts
    in one frame and ends in the next, as some do at any size."""
    out = tmp_path / "run"
    proc = run_cli("run", _spec(tmp_path / "spec", TARGET, 40), "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plain = {name: (out / name).read_bytes() for name in RECORD_FILES}
    for name in [*RECORD_FILES, "artifacts/pack-0001.bin"]:
        assert compact(out / name, 1, frame=1_000)
    assert len(_zstdcat(framed(out / "events.jsonl"))) == len(plain["events.jsonl"])
    assert read_jsonl(out / "bundles.jsonl") == [
        json.loads(x) for x in plain["bundles.jsonl"].splitlines()
    ]
    verify = run_cli("verify", out)
    assert verify.returncode == 0, verify.stdout
    assert "40 trials" in verify.stdout and "every digest matches" in verify.stdout
    last = read_jsonl(out / "bundles.jsonl")[-1]["trial"]["trial_id"]
    shown = run_cli("show", out, last)
    assert shown.returncode == 0 and "matches its digest" in shown.stdout, shown.stdout
    assert run_cli("score", out).returncode == 0
    pack = framed(out / "artifacts" / "pack-0001.bin")
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0x40  # a middle frame
    pack.write_bytes(bytes(data))
    verify = run_cli("verify", out)
    assert verify.returncode == 4, verify.stdout
    assert "artifacts/pack-0001.bin" in verify.stdout, verify.stdout


def _held_run(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """A 5-trial run whose s3 and s4 wait for a file: the process once s0..s2 are done."""
    spec = _spec(tmp_path / "spec", HOLD, 5)
    run, never = tmp_path / "run", tmp_path / "never"
    proc = start_cli("run", spec, "-o", run, "-j", "5", env={"NEVER": str(never), **COMPACT})
    try:
        assert wait_for(lambda: len(_whole(run / "bundles.jsonl")) == 3, timeout=60)
    except BaseException:
        proc.kill()
        proc.communicate(timeout=30)
        raise
    return proc, run, never


def _whole(path: Path) -> list[bytes]:
    try:
        return path.read_bytes().split(b"\n")[:-1]
    except FileNotFoundError:
        return []


@pytest.mark.doc("docs/evidence.md", "Resuming a run makes its compacted files plain again")
def test_an_interrupted_compacted_run_resumes_and_is_compacted_again(tmp_path: Path) -> None:
    proc, run, never = _held_run(tmp_path)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "interrupted"
    assert framed(run / "bundles.jsonl").is_file() and not (run / "bundles.jsonl").exists()
    verify = run_cli("verify", run)
    assert verify.returncode == 3, verify.stdout
    never.touch()
    resumed = run_cli("resume", run, env=COMPACT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not (run / "bundles.jsonl").exists()
    assert len(_zstdcat(framed(run / "bundles.jsonl")).splitlines()) == 5
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "5 trials" in verify.stdout
    # the index the resumed writer made (its own lines' records, the others read) is the
    # one the whole file gives
    write_bundle_index(run / "bundles.jsonl", tmp_path / "read.idx")
    assert (run / "bundles.idx").read_bytes() == (tmp_path / "read.idx").read_bytes()


@pytest.mark.doc(
    "docs/evidence.md",
    "The plain file is removed only once the `.zst` is whole on disk",
)
def test_a_kill_at_any_point_of_compaction_leaves_a_run_resume_finishes(tmp_path: Path) -> None:
    """Compaction is, per file: write ``.NAME.zst.tmp``, fsync, rename it to ``NAME.zst``,
    remove ``NAME``; it runs before the manifest is sealed. A kill -9 of a run leaves it
    unsealed; the states a kill between those steps leaves are made here on that run, one
    file at each point: a torn temporary file, a whole ``.zst`` beside its plain file, a
    file compacted and one not."""
    proc, run, never = _held_run(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    plain_events = (run / "events.jsonl").read_bytes()
    compact(run / "events.jsonl", 1)  # done: only the .zst is left
    assert not (run / "events.jsonl").exists()
    compact(run / "bundles.jsonl", 1)  # renamed, the plain file not removed yet
    (run / "bundles.jsonl").write_bytes(_zstdcat(framed(run / "bundles.jsonl")))
    torn = run / ".scores.jsonl.zst.tmp"  # killed while writing the frames
    torn.write_bytes(framed(run / "bundles.jsonl").read_bytes()[:20])
    verify = run_cli("verify", run)
    assert verify.returncode == 3, verify.stdout  # unfinished, every digest matches
    never.touch()
    resumed = run_cli("resume", run, env=COMPACT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not torn.exists()
    events = _zstdcat(framed(run / "events.jsonl"))
    assert events.startswith(plain_events)
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "5 trials" in verify.stdout and "every digest matches" in verify.stdout


KILLER = """
import os
import signal
import sys

import assay.evidence._framed as framed

step, count = sys.argv.pop(1), int(sys.argv.pop(1))
seen = {"compact": 0, "fsync": 0, "replace": 0}


def kill_at(kind):
    seen[kind] += 1
    if kind == step and seen[kind] == count:
        os.kill(os.getpid(), signal.SIGKILL)


real_compact, real_fsync, real_replace = framed.compact, os.fsync, os.replace


def compact(path, threshold, **options):
    kill_at("compact")  # before this file's compaction starts
    return real_compact(path, threshold, **options)


def fsync(fd):
    if os.readlink(f"/proc/self/fd/{fd}").endswith(".zst.tmp"):
        kill_at("fsync")  # the frames written, not synced nor renamed
    real_fsync(fd)


def replace(source, target):
    real_replace(source, target)
    if str(target).endswith(".zst"):
        kill_at("replace")  # renamed into place, the plain file not removed yet


framed.compact, os.fsync, os.replace = compact, fsync, replace
from assay.cli import main

main()
"""


@pytest.mark.parametrize(
    ("step", "count"),
    [("compact", 2), ("compact", 5), ("fsync", 1), ("fsync", 4), ("replace", 3), ("replace", 5)],
)
def test_a_kill_9_while_compacting_leaves_a_run_resume_finishes(
    tmp_path: Path, step: str, count: int
) -> None:
    """A real ``kill -9`` of ``assay run`` as it compacts its files at the seal (the
    process kills itself at the point named: before the n-th file, once the n-th
    file's frames are written but not synced, once the n-th ``.zst`` is renamed into
    place but its plain file not removed; the files are the plan, the events, the
    bundles, the scores and the pack)."""
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    run = tmp_path / "run"
    spec = _spec(tmp_path / "spec", TARGET, 6)
    argv = [sys.executable, killer, step, str(count), "run", spec, "-o", run]
    env = {**os.environ, **COMPACT}
    killed = subprocess.run(argv, capture_output=True, cwd=tmp_path, env=env, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "running"
    resumed = run_cli("resume", run, env=COMPACT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not (run / "bundles.jsonl").exists() and framed(run / "bundles.jsonl").is_file()
    assert not [p.name for p in run.rglob(".*.tmp")]
    verify = run_cli("verify", run)
    assert verify.returncode == 0, verify.stdout
    assert "6 trials" in verify.stdout and "every digest matches" in verify.stdout


def test_report_details_read_a_compacted_runs_texts(run: Path) -> None:
    """The texts the HTML report shows per trial come from the compacted pack too."""
    from assay.report._details import read_details

    bundles = read_jsonl(run / "bundles.jsonl")
    wanted = {b["trial"]["trial_id"] for b in bundles}
    details = read_details(run, wanted)
    assert set(details) == wanted
    for bundle in bundles:
        detail = details[bundle["trial"]["trial_id"]]
        assert detail.input == str(bundle["trial"]["sample_id"][1:]), detail
