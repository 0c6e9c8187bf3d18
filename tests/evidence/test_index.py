"""The sealed run's indexes: sorted fixed-size records, found by bisection."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from assay.evidence import _buckets, _index
from assay.evidence._buckets import Buckets
from assay.evidence._index import (
    BUNDLE_ENTRY,
    bundle_entry,
    find_bundle_line,
    find_in_pack_index,
    write_bundle_index,
    write_pack_index,
)
from assay.evidence._pack import record_bytes, scan_headers, scan_pack, whole_length


def _pack(folder: Path, count: int) -> tuple[Path, dict[str, bytes]]:
    payloads = {}
    pack = folder / "pack-0001.bin"
    with open(pack, "wb") as handle:
        for i in range(count):
            data = f"payload {i}".encode() * (i % 7 + 1)
            sha = hashlib.sha256(data).hexdigest()
            payloads[sha] = data
            handle.write(record_bytes(sha, data))
    return pack, payloads


@pytest.mark.parametrize("spill", [16_384, 64])
def test_pack_index_finds_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spill: int
) -> None:
    monkeypatch.setattr(_index, "_SPILL", spill)  # 64: every bucket goes to scratch
    if spill == 64:
        monkeypatch.setattr(_index, "_AT_ONCE", 0)  # by the buckets, not sorted at once
    pack, payloads = _pack(tmp_path, 3000)
    index = write_pack_index(pack)
    assert index.stat().st_size == 3000 * 48
    raw = index.read_bytes()
    keys = [raw[i : i + 32] for i in range(0, len(raw), 48)]
    assert keys == sorted(keys)
    data = pack.read_bytes()
    for sha, payload in payloads.items():
        found = find_in_pack_index(index, sha)
        assert found is not None
        offset, size = found
        assert data[offset : offset + size] == payload
    assert find_in_pack_index(index, "0" * 64) is None
    assert sorted(tmp_path.iterdir()) == sorted([pack, index])  # no scratch file left


def test_bundle_index_finds_every_trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index, "_SPILL", 40)
    monkeypatch.setattr(_index, "_AT_ONCE", 0)  # by the buckets, not sorted at once
    bundles = tmp_path / "bundles.jsonl"
    ids = [hashlib.sha256(str(i).encode()).hexdigest()[:24] for i in range(2000)]
    lines = [
        json.dumps({"trial": {"trial_id": f"t-{h}"}, "n": i}, separators=(",", ":"))
        for i, h in enumerate(ids)
    ]
    bundles.write_text("".join(line + "\n" for line in lines))
    index = tmp_path / "bundles.idx"
    write_bundle_index(bundles, index)
    for h, line in zip(ids, lines, strict=True):
        assert find_bundle_line(bundles, index, f"t-{h}") == line.encode()
    assert find_bundle_line(bundles, index, "t-" + "f" * 24) is None


def test_a_bundle_index_from_the_writers_records_is_the_one_read_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's writer makes each bundle line's record as it writes it; a resumed
    run's writer appends, so the lines before its first are read at seal."""
    monkeypatch.setattr(_index, "_CHUNK", 7)  # records in several chunks
    bundles = tmp_path / "bundles.jsonl"
    ids = [hashlib.sha256(str(i).encode()).hexdigest()[:24] for i in range(300)]
    lines = [
        json.dumps({"trial": {"trial_id": f"t-{h}"}, "n": i}, separators=(",", ":")).encode()
        + b"\n"
        for i, h in enumerate(ids)
    ]
    bundles.write_bytes(b"".join(lines))
    write_bundle_index(bundles, tmp_path / "read.idx")
    for start_line in (0, 1, 120, 300):
        start = sum(len(line) for line in lines[:start_line])
        records, offset = bytearray(), start
        for line in lines[start_line:]:
            records += bundle_entry(line, offset)
            offset += len(line)
        made = tmp_path / f"made-{start_line}.idx"
        for held in (_buckets.HELD, 2 * BUNDLE_ENTRY.size):  # 2 records: buckets spilled
            monkeypatch.setattr(_buckets, "HELD", held)
            bucketed = Buckets(BUNDLE_ENTRY.size, tmp_path)  # as the run's writer keeps them
            for at in range(0, len(records), BUNDLE_ENTRY.size):
                bucketed.add(bytes(records[at : at + BUNDLE_ENTRY.size]))
            write_bundle_index(bundles, made, (start, bucketed))
            bucketed.close()
            assert made.read_bytes() == (tmp_path / "read.idx").read_bytes(), start_line


def test_pack_scan_streams_and_stops_at_a_torn_record(tmp_path: Path) -> None:
    pack, payloads = _pack(tmp_path, 50)
    whole = pack.stat().st_size
    with open(pack, "ab") as handle:
        handle.write(record_bytes("a" * 64, b"torn payload")[:-5])
    records = list(scan_pack(pack))
    assert [r[1] for r in records[:-1]] == list(payloads.values())  # type: ignore[index]
    headers = list(scan_headers(pack))
    assert [h.sha256 for h in headers[:-1]] == list(payloads)  # type: ignore[union-attr]
    assert headers[-1].header_offset == whole == whole_length(pack)


def test_a_pack_index_from_the_writers_entries_is_the_scanned_one(tmp_path: Path) -> None:
    """Sealing indexes the pack this process wrote from the entries it spilled while
    writing (nothing read back); the result is byte for byte the index a scan makes."""
    from tests.helpers import SHIPPING, run_cli

    run = tmp_path / "run"
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", run)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    pack = run / "artifacts" / "pack-0001.bin"
    written = pack.with_suffix(".idx").read_bytes()
    copy = tmp_path / "copy" / pack.name
    copy.parent.mkdir()
    copy.write_bytes(pack.read_bytes())
    scanned = _index.write_pack_index(copy).read_bytes()  # no entries given: a scan
    assert written == scanned
    assert len(written) == 48 * sum(1 for _ in scan_headers(pack)) > 0


def test_store_entries_name_each_payload_where_it_is(tmp_path: Path) -> None:
    from assay.evidence._store import ArtifactStore

    store = ArtifactStore(tmp_path / "artifacts")
    payloads = [b"a", b"bb" * 100, b"", b"x\ny\n"]
    refs = [store.put(data, "text/plain") for data in payloads]
    ((name, entries),) = store.written_packs().items()
    index = _index.write_pack_index(tmp_path / "artifacts" / name, entries)
    store.close()
    for ref, data in zip(refs, payloads, strict=True):
        offset, size = _index.find_in_pack_index(index, ref.sha256) or (-1, -1)
        with open(tmp_path / "artifacts" / name, "rb") as handle:
            handle.seek(offset)
            assert handle.read(size) == data


@pytest.mark.parametrize("at_once", [1 << 20, 4096])
@pytest.mark.parametrize("width", [48, 20])
def test_an_index_sorted_a_chunk_at_a_time_has_the_bytes_of_one_sort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int, at_once: int
) -> None:
    """Each chunk sorted and cut into buckets, each bucket sorted at the end (records
    over what is sorted at once: ``at_once`` 4096), or all sorted at once: the same
    bytes as one sort of every record, with records that share their first bytes or
    are stored twice, and buckets spilled to scratch."""
    import random

    rng = random.Random(7)
    records = [rng.randbytes(width) for _ in range(5000)]
    records += records[:40]  # the same record twice (a payload stored twice)
    records += [records[3][:8] + rng.randbytes(width - 8) for _ in range(30)]  # one head
    records += [bytes(8) + rng.randbytes(width - 8) for _ in range(5)]  # the lowest head
    rng.shuffle(records)
    chunks = [b"".join(records[i : i + 700]) for i in range(0, len(records), 700)]
    monkeypatch.setattr(_index, "_SPILL", 4096)
    monkeypatch.setattr(_index, "_AT_ONCE", at_once)
    _index._write_sorted(chunks, width, tmp_path / "numpy.idx")
    assert (tmp_path / "numpy.idx").read_bytes() == b"".join(sorted(records))


def test_an_index_that_fits_in_the_buckets_is_sorted_without_a_scratch_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's index of up to 1 MiB (a 5,000-trial run's pack records) is sorted at
    once in memory: no scratch file, half the CPU of the buckets' way; the bytes are
    those of one sort, and only the index is left in the folder."""
    import random
    import tempfile

    def no_scratch(*args: object, **kwargs: object) -> None:
        raise AssertionError("a scratch file for an index that fits in memory")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_scratch)
    rng = random.Random(3)
    records = [rng.randbytes(48) for _ in range(20_000)]
    chunks = [b"".join(records[i : i + 4096]) for i in range(0, len(records), 4096)]
    _index._write_sorted(chunks, 48, tmp_path / "pack-0001.idx")
    assert (tmp_path / "pack-0001.idx").read_bytes() == b"".join(sorted(records))
    assert [p.name for p in tmp_path.iterdir()] == ["pack-0001.idx"]


@pytest.mark.parametrize("width", [48, 20])
def test_buckets_write_the_bytes_of_one_sort_with_newlines_in_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """The seal cuts each bucket into records by a pattern: records made of newlines
    (and every other byte), some spilled to scratch, come out as one sort of them all."""
    import random

    from assay.evidence import _buckets

    monkeypatch.setattr(_buckets, "HELD", 256)
    rng = random.Random(11)
    records = [rng.randbytes(width) for _ in range(3000)]
    records += [b"\n" * width, b"\n" + bytes(width - 1), bytes(width), b"\xff" * width]
    records += [bytes([b]) + b"\n" * (width - 1) for b in range(256)]
    rng.shuffle(records)
    buckets = Buckets(width, tmp_path)
    for record in records:
        buckets.add(record)
    buckets.write_sorted(tmp_path / "x.idx")
    buckets.close()
    assert (tmp_path / "x.idx").read_bytes() == b"".join(sorted(records))


@pytest.mark.parametrize("width", [48, 20])
def test_records_are_cut_by_groups_and_the_rest_as_slices_would_cut_them(width: int) -> None:
    """``split_records`` cuts ``GROUP`` records at a time by a struct, the rest by a
    pattern: every count around a group's edge, from bytes or a bytearray (cleared
    after: no view of it is left), gives the records one slice each would."""
    import random

    from assay.evidence._buckets import GROUP, split_records

    rng = random.Random(7)
    for count in (0, 1, GROUP - 1, GROUP, GROUP + 1, 3 * GROUP, 3 * GROUP + 5):
        data = rng.randbytes(width * count).replace(b"\x00", b"\n")  # newlines in records
        expected = [data[at : at + width] for at in range(0, len(data), width)]
        assert split_records(data, width) == expected
        held = bytearray(data)
        assert split_records(held, width) == expected
        held.clear()  # a BufferError if a view of it were still held


def _entries_one_by_one(lines: list[bytes], offset: int) -> list[bytes]:
    """``bundle_entry`` of each line, each followed by a newline in the file."""
    made = []
    for line in lines:
        if entry := bundle_entry(line, offset):
            made.append(entry)
        offset += len(line) + 1
    return made


def test_a_flushs_bundle_records_made_at_once_are_those_made_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bundle_entries_of`` (the writer's flush) against ``bundle_entry`` a line: the
    trial's own id counts (not one in an expected value), and a line naming no trial id
    (which takes the one-by-one way) gets no record."""
    ids = [hashlib.sha256(str(i).encode()).hexdigest()[:24] for i in range(700)]
    lines = [
        json.dumps(
            {
                "observation": {"expected": {"trial_id": f"t-{'ab' * 12}"} if i % 5 == 0 else i},
                "trial": {"trial_id": f"t-{h}"},
            },
            separators=(",", ":"),
        ).encode()
        for i, h in enumerate(ids)
    ]
    offset = 12_345
    made = _index.bundle_entries_of(lines, offset)
    assert made == _entries_one_by_one(lines, offset) and len(made) == len(lines)
    assert made[1] == BUNDLE_ENTRY.pack(bytes.fromhex(ids[1]), offset + len(lines[0]) + 1)
    # the trial's own id, not the one its expected value holds (found first from the
    # start: that trial was then looked up under another's id, and not found under its own)
    assert made[0] == BUNDLE_ENTRY.pack(bytes.fromhex(ids[0]), offset)
    odd = [*lines[:3], b'{"no":"trial"}', *lines[3:9]]
    assert _index.bundle_entries_of(odd, 7) == _entries_one_by_one(odd, 7)
    assert len(_index.bundle_entries_of(odd, 7)) == 9
    for held in (_buckets.HELD, 2 * BUNDLE_ENTRY.size):  # 2 records: buckets spilled
        monkeypatch.setattr(_buckets, "HELD", held)
        one, many = Buckets(BUNDLE_ENTRY.size, tmp_path), Buckets(BUNDLE_ENTRY.size, tmp_path)
        for record in made:
            one.add(record)
        # flushes of 300 and 300 (every bucket looked at), then 100 (those it touched)
        for at in range(0, len(made), 300):
            many.add_many(made[at : at + 300])
        many.add_many(made[:3])  # a flush of fewer than 256: the buckets it touched
        for record in made[:3]:
            one.add(record)
        assert list(many.chunks()) == list(one.chunks())
        assert [len(h) < held for h in many.held] == [True] * 256
        one.close()
        many.close()


def test_the_run_writers_bundle_records_find_every_bundle_it_flushed(tmp_path: Path) -> None:
    """Lines queued, flushed in three flushes (one empty): the records the writer made
    give the index read from its file, and each trial's own line."""
    from assay.evidence._rundir import RunWriter

    ids = [hashlib.sha256(str(i).encode()).hexdigest()[:24] for i in range(50)]
    lines = [
        json.dumps({"n": "x" * (i % 13), "trial": {"trial_id": f"t-{h}"}}, separators=(",", ":"))
        for i, h in enumerate(ids)
    ]
    writer = RunWriter(tmp_path / "run")
    try:
        for chunk in (lines[:20], [], lines[20:]):
            for line in chunk:
                writer.write_bundle(line.encode())
            writer.flush()
        bundles = tmp_path / "run" / "bundles.jsonl"
        assert bundles.read_text() == "".join(line + "\n" for line in lines)
        write_bundle_index(bundles, tmp_path / "made.idx", writer.bundle_entries())
    finally:
        writer.close()
    write_bundle_index(bundles, tmp_path / "read.idx")
    assert (tmp_path / "made.idx").read_bytes() == (tmp_path / "read.idx").read_bytes()
    for h, line in zip(ids, lines, strict=True):
        assert find_bundle_line(bundles, tmp_path / "made.idx", f"t-{h}") == line.encode()
