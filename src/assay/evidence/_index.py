"""Indexes for finding one trial's evidence in a big run without reading all of it.

Written once when a run is sealed and listed with their digests in the manifest. The
bundle index is read from ``bundles.jsonl``; a pack's, from the entries its writer
spilled to a scratch file as it went (``pack_entry``), or, for a pack written by an
earlier process (a resumed run), from the pack itself:

- ``bundles.idx``: per trial, the byte offset of its bundle line, sorted by trial id;
- ``artifacts/pack-NNNN.idx``: per pack record, its digest, offset and size, sorted by
  digest (as git does for its packs).

Both are fixed-size binary records searched by bisection, so a lookup reads a few
pages whatever the size of the run. They are conveniences: what they point at is
checked against its own digest when read.
"""

from __future__ import annotations

import bisect
import itertools
import mmap
import os
import struct
import tempfile
from binascii import unhexlify
from collections.abc import Container, Iterable, Iterator
from itertools import accumulate, repeat
from operator import add
from pathlib import Path

from assay.evidence._buckets import Buckets, split_records
from assay.evidence._framed import open_evidence
from assay.evidence._index_out import index_written
from assay.evidence._pack import PackError, scan_headers

_CHUNK = 4096
"""Index records handled at a time when sealing."""
_BUNDLE = struct.Struct(">12sQ")  # trial id (the 24 hex digits as bytes), line offset
PACK_ENTRY = _PACK = struct.Struct(">32sQQ")  # sha256, payload offset, size
BUNDLE_ENTRY = _BUNDLE
BUNDLE_INDEX = "bundles.idx"


def write_bundle_index(bundles: Path, index: Path, known: tuple[int, Buckets] | None = None) -> str:
    """Index *bundles* (a JSONL file of bundles) by trial id; returns the index's
    SHA-256 (hex), for the manifest. *known*: ``(start, records)``, the
    ``bundle_entry`` records of the lines from byte *start* on, put in their buckets by
    the run's writer as it wrote them (the lines before *start* are read into them)."""
    if known is None:
        return _write_sorted(_bundle_entries(bundles), _BUNDLE.size, index)
    start, buckets = known
    for chunk in _bundle_entries(bundles, start) if start else ():
        for at in range(0, len(chunk), _BUNDLE.size):
            buckets.add(chunk[at : at + _BUNDLE.size])
    return buckets.write_sorted(index)


_MARKER = b'"trial_id":"t-'


def bundle_entry(line: bytes, offset: int) -> bytes:
    """The bundle index's record of the bundle *line* at byte *offset* of its file
    (nothing for a line that names no trial id).

    The id is the line's last ``"trial_id":"t-``: a canonical bundle's ``trial`` sorts
    after everything a task's data can be in (``observation``: an expected value may
    well hold a ``trial_id`` key), its ``trial_id`` last in it, and only ``usage`` (numbers)
    after it. Searched from the end, the marker is met within ~60 bytes, not after
    the whole line."""
    at = line.rfind(_MARKER) + len(_MARKER)
    if at < len(_MARKER):
        return b""
    return _BUNDLE.pack(bytes.fromhex(line[at : at + 24].decode()), offset)


def bundle_entries_of(lines: list[bytes], offset: int) -> list[bytes]:
    """``bundle_entry`` of each of *lines* (each followed by a newline in the file, not
    ending in it), the first at byte *offset*: the run writer's records of the lines it
    flushes, made a flush at a time by C loops (``map``), not a Python call each. A line
    naming no trial id (none of the run's) sends them all ``bundle_entry``'s way."""
    starts = list(map(bytes.rfind, lines, repeat(_MARKER)))
    if -1 in starts:
        made = map(bundle_entry, lines, _line_starts(lines, offset))
        return [entry for entry in made if entry]
    ids = map(
        bytes.__getitem__,
        lines,
        map(slice, map(add, starts, repeat(len(_MARKER))), map(add, starts, repeat(_ID_END))),
    )
    return list(map(_BUNDLE.pack, map(unhexlify, ids), _line_starts(lines, offset)))


def _line_starts(lines: list[bytes], offset: int) -> Iterator[int]:
    """Where each of *lines* starts, each followed by a newline, the first at *offset*
    (and where the next would: one more than the lines)."""
    return map(add, accumulate(map(len, lines), initial=offset), itertools.count())


_ID_END = len(_MARKER) + 24
"""Where a trial id's 24 hex digits end, from where its marker starts."""


def _bundle_entries(bundles: Path, stop: int | None = None) -> Iterator[bytes]:
    """The bundle index's records, a few thousand at a time (of the lines that start
    before byte *stop*, if given)."""
    offset = 0
    entry, chunk = bundle_entry, bytearray()
    with open_evidence(bundles) as handle:
        for line in handle:
            if stop is not None and offset >= stop:
                break
            chunk += entry(line, offset)
            if len(chunk) >= _CHUNK * _BUNDLE.size:
                yield bytes(chunk)
                chunk.clear()
            offset += len(line)
    yield bytes(chunk)


def find_bundle_line(bundles: Path, index: Path, trial_id: str) -> bytes | None:
    """The bundle line of *trial_id* (``t-`` + 24 hex), found through *index*."""
    key = bytes.fromhex(trial_id.removeprefix("t-"))
    offset = _search(index, _BUNDLE, key)
    if offset is None:
        return None
    with open_evidence(bundles) as handle:
        handle.seek(offset[0])
        return handle.readline().rstrip(b"\n")


def pack_index(pack: Path) -> Path:
    """Where the index of *pack* lives: beside it, ``pack-NNNN.idx``."""
    return pack.with_suffix(".idx")


def pack_entry(sha256: str, offset: int, size: int) -> bytes:
    """One record of a pack index: the payload's digest, offset and size."""
    return _PACK.pack(bytes.fromhex(sha256), offset, size)


def write_pack_index(pack: Path, entries: Iterable[bytes] | Buckets | None = None) -> Path:
    """Index one pack by digest; returns the index path (``.idx`` beside the pack).
    *entries*: as for ``pack_index_hashed``."""
    return pack_index_hashed(pack, entries)[0]


def pack_index_hashed(
    pack: Path, entries: Iterable[bytes] | Buckets | None = None
) -> tuple[Path, str]:
    """Index one pack by digest; returns the index path (``.idx`` beside the pack) and
    its SHA-256 (hex), hashed as it was written (the manifest lists it).
    *entries* (``pack_entry`` records, in any order): what its writer recorded as it
    wrote it, in chunks of whole records or already in their buckets; without them the
    pack is scanned (a tenth of a big run's sealing)."""
    index = pack_index(pack)
    if isinstance(entries, Buckets):
        return index, entries.write_sorted(index)
    chunks = _pack_entries(pack) if entries is None else entries
    return index, _write_sorted(chunks, _PACK.size, index)


def entries_wanted(
    chunks: Iterable[bytes], wanted: Container[bytes]
) -> Iterator[tuple[bytes, int, int]]:
    """``(digest, offset, size)`` of the ``pack_entry`` records in *chunks* (each a whole
    number of records) whose binary digest is in *wanted*: a pass in C, no object made
    for the records that are not wanted."""
    for chunk in chunks:
        yield from (entry for entry in _PACK.iter_unpack(chunk) if entry[0] in wanted)


def index_chunks(pack: Path) -> Iterator[bytes]:
    """*pack*'s ``pack_entry`` records, some thousands at a time: from its ``.idx`` when
    it has one this code wrote, else from its headers."""
    step = _PACK.size * 4096
    try:
        with open(pack_index(pack), "rb") as handle:
            if os.fstat(handle.fileno()).st_size % _PACK.size == 0:
                while chunk := handle.read(step):
                    yield chunk
                return
    except FileNotFoundError:
        pass
    yield b"".join(_pack_entries(pack))


def _pack_entries(pack: Path) -> Iterator[bytes]:
    """A pack's index records read from its headers, a few thousand at a time."""
    chunk = bytearray()
    for record in scan_headers(pack):
        if isinstance(record, PackError):
            break
        chunk += _PACK.pack(bytes.fromhex(record.sha256), record.offset, record.size)
        if len(chunk) >= _CHUNK * _PACK.size:
            yield bytes(chunk)
            chunk.clear()
    yield bytes(chunk)


# Records are sorted in 256 buckets by their first byte (the keys are hashes, so the
# buckets fill evenly); a bucket's records wait in memory up to _SPILL bytes, then go
# to a scratch file. So sealing a run of any size holds a few MB, not every record.
_SPILL = 8_192
_AT_ONCE = 1 << 20
"""Records up to this many bytes are sorted at once, in memory (a 5,000-trial network
run's 20,000 pack records: 960 kB); the sort holds about five times as much for a
moment. Over it, the chunks read so far go to the buckets one at a time."""
_BUCKETS = [bytes([first]) for first in range(1, 256)]


def _write_sorted(chunks: Iterable[bytes], width: int, index: Path) -> str:
    """Write the fixed-size records of *chunks* (each a whole number of records of
    *width* bytes) to *index* in byte order (big-endian fields, so byte order is the
    order of the key, then of the fields after it); returns its SHA-256 (hex).

    A chunk is cut into its buckets at once (sorted and bisected in C), so no Python
    code runs per record but the slicing; each bucket is sorted whole at the end: the
    bytes of one sort of it all. (numpy sorted a 400,000-record index in 0.1 s against
    Python's 0.23 s, but importing it adds 16 MB to the run's peak memory.)"""
    chunks = iter(chunks)
    head: list[bytes] = []
    size = 0
    for chunk in chunks:
        head.append(chunk)
        size += len(chunk)
        if size > _AT_ONCE:
            break
    else:  # all of it: one sort, no buckets, no scratch (half the CPU at 10,000 records)
        return _write_whole(index, b"".join(sorted(split_records(b"".join(head), width))))
    buffers = [bytearray() for _ in range(256)]
    spilled: list[list[tuple[int, int]]] = [[] for _ in range(256)]
    with tempfile.TemporaryFile(dir=index.parent) as spill:
        for chunk in itertools.chain(_drained(head), chunks):
            for bucket, records in _bucketed(chunk, width):
                buffer = buffers[bucket]
                buffer += records
                if len(buffer) >= _SPILL:
                    spilled[bucket].append((spill.tell(), len(buffer)))
                    spill.write(buffer)
                    buffer.clear()
        spill.flush()  # pread below reads the file, not the write buffer
        with index_written(index) as out:  # renamed once whole: no torn index trusted
            for bucket, buffer in enumerate(buffers):
                data = bytearray()
                for start, size in spilled[bucket]:
                    data += os.pread(spill.fileno(), size, start)
                data += buffer
                buffers[bucket] = bytearray()
                out.write(b"".join(sorted(split_records(bytes(data), width))))
    return out.digest


def _drained(chunks: list[bytes]) -> Iterator[bytes]:
    """*chunks* in order, each let go of as it is handed on."""
    chunks.reverse()
    while chunks:
        yield chunks.pop()


def _write_whole(index: Path, data: bytes) -> str:
    """*index* written at once, under a temporary name then renamed (as above); its
    SHA-256 (hex)."""
    with index_written(index) as out:
        out.write(data)
    return out.digest


def _bucketed(chunk: bytes, width: int) -> list[tuple[int, bytes]]:
    """*chunk*'s records by first byte (``(byte, records)``, only bytes present)."""
    records = sorted(split_records(chunk, width))
    cuts = [0, *(bisect.bisect_left(records, first) for first in _BUCKETS), len(records)]
    return [
        (bucket, b"".join(records[cuts[bucket] : cuts[bucket + 1]]))
        for bucket in range(256)
        if cuts[bucket] < cuts[bucket + 1]
    ]


def find_in_pack_index(index: Path, sha256: str) -> tuple[int, int] | None:
    """``(offset, size)`` of *sha256*'s payload in the pack *index* describes."""
    found = _search(index, _PACK, bytes.fromhex(sha256))
    return (found[0], found[1]) if found is not None else None


def _search(index: Path, layout: struct.Struct, key: bytes) -> tuple[int, ...] | None:
    try:
        handle = open(index, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with handle:
        if index.stat().st_size == 0:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = find_key(data, layout, key)
            if at is not None:
                fields = layout.unpack_from(data, at * layout.size)
                return tuple(fields[1:])
    return None


def find_key(data: mmap.mmap, layout: struct.Struct, key: bytes) -> int | None:
    """The position of *key*'s record in *data*, sorted records of *layout* that start
    with their key (``_PACK``, ``_BUNDLE``); None if there is none. A bisection over
    slices, not ``bisect`` over a sequence-like view of them: the same steps, and in a
    compiled build of this module the view would be a native class, not a sequence."""
    width, size = layout.size, int(layout.format[1:].split("s")[0])
    low, high = 0, len(data) // width
    count = high
    while low < high:
        middle = (low + high) // 2
        start = middle * width
        if data[start : start + size] < key:
            low = middle + 1
        else:
            high = middle
    start = low * width
    return low if low < count and data[start : start + size] == key else None
