"""Indexes written and hashed on a thread: the digest the manifest lists is the file's."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from assay.evidence import _index
from assay.evidence._buckets import Buckets
from assay.evidence._index_out import index_written
from assay.pipeline._seal import sealed_digests, write_indexes


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("at_once", [1 << 20, 0])
def test_every_way_of_writing_an_index_returns_the_digest_of_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    """Sorted at once, by buckets with scratch, or from the writer's buckets: the
    digest returned is the SHA-256 of the file as it lies on disk, and no temporary
    file is left beside it."""
    monkeypatch.setattr(_index, "_AT_ONCE", at_once)
    monkeypatch.setattr(_index, "_SPILL", 512)
    rng = random.Random(5)
    records = [rng.randbytes(48) for _ in range(3000)]
    chunks = [b"".join(records[i : i + 500]) for i in range(0, len(records), 500)]
    digest = _index._write_sorted(chunks, 48, tmp_path / "a.idx")
    assert (tmp_path / "a.idx").read_bytes() == b"".join(sorted(records))
    assert digest == _sha(tmp_path / "a.idx")
    buckets = Buckets(48, tmp_path)
    for record in records:
        buckets.add(record)
    assert buckets.write_sorted(tmp_path / "b.idx") == _sha(tmp_path / "b.idx")
    buckets.close()
    assert (tmp_path / "b.idx").read_bytes() == (tmp_path / "a.idx").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.idx", "b.idx"]


def test_the_manifest_lists_the_indexes_by_the_digests_of_their_files(tmp_path: Path) -> None:
    """``write_indexes`` names every index with its digest; ``sealed_digests`` lists
    them as the whole-file SHA-256 a verifier computes, as when they were read back."""
    from assay.evidence._pack import record_bytes

    run = tmp_path / "run"
    (run / "artifacts").mkdir(parents=True)
    for name in ("pack-0001.bin", "pack-0002.bin"):
        with open(run / "artifacts" / name, "wb") as handle:
            for i in range(300):
                data = f"{name} {i}".encode()
                handle.write(record_bytes(hashlib.sha256(data).hexdigest(), data))
    lines = [f'{{"trial":{{"trial_id":"t-{i:024x}"}}}}\n' for i in range(200)]
    (run / "bundles.jsonl").write_text("".join(lines))
    for name in ("plan.jsonl", "scores.jsonl"):
        (run / name).write_text("{}\n")
    indexes = write_indexes(run)
    names = ["bundles.idx", "artifacts/pack-0001.idx", "artifacts/pack-0002.idx"]
    assert sorted(indexes) == sorted(names)
    files = sealed_digests(run, {"report.md": b"r"}, indexes)
    for name in names:
        assert files[name] == "sha256:" + _sha(run / name)


def test_a_failed_index_write_is_raised_and_leaves_no_file(tmp_path: Path) -> None:
    """A write that fails (a full disk) fails the seal, and neither the index nor its
    temporary file is left."""

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError("disk full")

    index = tmp_path / "x.idx"
    with pytest.raises(OSError, match="disk full"), index_written(index) as out:
        out._file = Full()  # type: ignore[assignment]
        out.write(b"x" * 100)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_while_sorting_leaves_no_file(tmp_path: Path) -> None:
    """The seal failing mid-index: nothing is left, the error is the caller's."""
    with pytest.raises(RuntimeError, match="sort"), index_written(tmp_path / "x.idx") as out:
        out.write(b"partial")
        raise RuntimeError("sort")
    assert list(tmp_path.iterdir()) == []
