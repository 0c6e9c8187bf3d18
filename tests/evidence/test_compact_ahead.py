"""Compaction ahead (``evidence/_compactor.py``): a live run's whole frames compressed on
a thread while the run appends, the seal left the last ones.

Real files and the real thread, with frames of 1,000 bytes (1 MiB in a run) so a few
kilobytes make many frames; what it writes is checked against ``compact`` of the same
bytes, which is what a seal without it writes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.evidence._compactor import Compactor
from assay.evidence._durable import THREADS
from assay.evidence._framed import compact, framed, open_evidence
from tests.helpers import wait_for

FRAME = 1_000
NAMES = ("plan.jsonl", "events.jsonl", "bundles.jsonl", "scores.jsonl", "artifacts/pack-0001.bin")


def _lines(name: str, start: int, count: int) -> bytes:
    return b"".join(b'{"n":%d,"in":"%s"}\n' % (i, name.encode()) for i in range(start, count))


def _temp(run: Path, name: str) -> Path:
    target = framed(run / name)
    return target.with_name(f".{target.name}.tmp")


def _grow(run: Path, start: int, count: int) -> None:
    for name in NAMES:
        with open(run / name, "ab") as handle:
            handle.write(_lines(name, start, count))


def _started(tmp_path: Path) -> tuple[Path, Compactor]:
    """A "run" with 200 lines in each file, its compactor started and poked, once every
    file's first frames are compressed into its temporary file."""
    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    _grow(run, 0, 200)
    ahead = Compactor(run, frame=FRAME)
    ahead.poke()
    # every file's whole frames are compressed while the "run" goes on: the .tmp grows
    assert wait_for(lambda: all(_temp(run, n).is_file() for n in NAMES), timeout=30)
    return run, ahead


def _compact_whole(plain: bytes, folder: Path) -> bytes:
    """What ``compact`` writes for *plain*: the seal's bytes without compaction ahead."""
    folder.mkdir()
    (folder / "file").write_bytes(plain)
    assert compact(folder / "file", 1, frame=FRAME)
    return framed(folder / "file").read_bytes()


@pytest.mark.doc(
    "docs/evidence.md",
    "each whole frame of a big file is compressed ahead into that temporary file",
    "the bytes are those sealing alone writes",
)
def test_frames_compacted_ahead_make_the_bytes_and_digests_of_a_compaction_at_seal(
    tmp_path: Path,
) -> None:
    run, ahead = _started(tmp_path)
    written = {n: _temp(run, n).stat().st_size for n in NAMES}
    _grow(run, 200, 500)  # more lines, and the last ones straddle a frame
    ahead.poke()
    assert wait_for(lambda: all(_temp(run, n).stat().st_size > written[n] for n in NAMES), 30)
    _grow(run, 500, 517)  # written after the thread's last look: the seal's part
    plain = {n: (run / n).read_bytes() for n in NAMES}
    for name in ("plan.jsonl", "bundles.jsonl", "scores.jsonl"):  # the manifest's digests
        assert ahead.digest(name) == hashlib.sha256(plain[name]).hexdigest(), name
    assert ahead.digest("events.jsonl") is None  # not hashed: nothing asks
    with ThreadPoolExecutor(2) as workers:
        assert ahead.finish(1, workers) == set(NAMES)
    for i, name in enumerate(NAMES):
        assert not (run / name).exists() and not _temp(run, name).exists(), name
        assert framed(run / name).read_bytes() == _compact_whole(plain[name], tmp_path / f"{i}")
        with open_evidence(run / name) as handle:
            assert handle.read() == plain[name], name


def test_a_file_still_under_the_threshold_at_seal_stays_plain(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    _grow(run, 0, 200)
    ahead = Compactor(run, frame=FRAME)
    ahead.poke()
    assert wait_for(lambda: _temp(run, "events.jsonl").is_file(), timeout=30)
    size = (run / "events.jsonl").stat().st_size
    with ThreadPoolExecutor(2) as workers:
        ahead.finish(size + 1, workers)
    assert (run / "events.jsonl").stat().st_size == size
    assert not framed(run / "events.jsonl").exists() and not _temp(run, "events.jsonl").exists()


def test_a_run_closed_without_a_seal_keeps_its_plain_files_and_no_temporary_ones(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    _grow(run, 0, 200)
    before = {n: (run / n).read_bytes() for n in NAMES}
    ahead = Compactor(run, frame=FRAME)
    ahead.poke()
    assert wait_for(lambda: all(_temp(run, n).is_file() for n in NAMES), timeout=30)
    ahead.discard()
    assert {n: (run / n).read_bytes() for n in NAMES} == before
    assert sorted(p.name for p in run.rglob("*") if p.is_file()) == sorted(
        Path(n).name for n in NAMES
    )


def test_a_pack_begun_while_the_run_goes_is_compacted_ahead_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    _grow(run, 0, 200)
    ahead = Compactor(run, frame=FRAME)
    ahead.poke()
    assert wait_for(lambda: _temp(run, "artifacts/pack-0001.bin").is_file(), timeout=30)
    shutil.copyfile(run / "artifacts/pack-0001.bin", run / "artifacts/pack-0002.bin")
    ahead.poke()
    assert wait_for(lambda: _temp(run, "artifacts/pack-0002.bin").is_file(), timeout=30)
    copy = (run / "artifacts/pack-0002.bin").read_bytes()
    with ThreadPoolExecutor(2) as workers:
        assert "artifacts/pack-0002.bin" in ahead.finish(1, workers)
    with open_evidence(run / "artifacts/pack-0002.bin") as handle:
        assert handle.read() == copy
    assert sorted(os.listdir(run / "artifacts")) == ["pack-0001.bin.zst", "pack-0002.bin.zst"]


def test_an_error_on_the_thread_leaves_the_whole_compaction_to_the_seal(tmp_path: Path) -> None:
    """A file it cannot write (here a folder where its temporary file would go) stops
    the thread; the seal then compacts every file itself, from the plain bytes."""
    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    _grow(run, 0, 200)
    _temp(run, "events.jsonl").mkdir()
    ahead = Compactor(run, frame=FRAME)
    ahead.poke()
    assert wait_for(lambda: ahead.broken, timeout=30)
    with ThreadPoolExecutor(2) as workers:
        assert ahead.finish(1, workers) == set()
    for name in NAMES:
        assert (run / name).is_file() and not framed(run / name).exists(), name
        if name != "events.jsonl":
            assert not _temp(run, name).exists(), name


def test_the_seal_syncs_the_files_together_each_before_its_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sealed files' fsyncs wait on the disk together (one journal commit, not one
    a file), and each ``.zst`` is on disk before it is renamed into place."""
    import threading

    run, ahead = _started(tmp_path)
    # all five fsyncs must be waiting at once for any to go on (one after the other,
    # the first would wait for the others in vain: the barrier breaks, the test fails)
    together = threading.Barrier(len(NAMES), timeout=10)
    synced: list[str] = []
    fsync, replace = os.fsync, os.replace

    def waiting_fsync(descriptor: int) -> None:
        together.wait()
        fsync(descriptor)
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))

    def checked_replace(source: Path, target: Path) -> None:
        assert str(source) in synced, f"{source} renamed before it was synced"
        replace(source, target)

    monkeypatch.setattr(os, "fsync", waiting_fsync)
    monkeypatch.setattr(os, "replace", checked_replace)
    with ThreadPoolExecutor(THREADS) as workers:  # the seal's threads
        assert ahead.finish(1, workers) == set(NAMES)
    assert len(synced) == len(NAMES)
    for name in NAMES:
        assert framed(run / name).is_file() and not (run / name).exists(), name


def test_a_thread_reuses_its_compressor_and_each_frame_is_a_fresh_ones() -> None:
    import zstandard

    from assay.evidence import _framed

    blocks = [_lines(name, 0, 300) for name in NAMES]
    packed = [_framed._compress(block) for block in blocks]  # one compressor, in turn
    assert _framed._compressors.zstd is not None  # kept for the thread's next frame
    fresh = [zstandard.ZstdCompressor(level=1, write_checksum=True) for _ in blocks]
    assert packed == [each.compress(block) for each, block in zip(fresh, blocks, strict=True)]
    with ThreadPoolExecutor(2) as pool:  # another thread's: the same bytes
        assert list(pool.map(_framed._compress, blocks)) == packed
