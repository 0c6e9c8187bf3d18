"""A pack index's records kept in 256 buckets by first byte as the pack is written.

A pack index is sorted by digest (``_index``). Sorting the records only at the seal
meant sorting each few thousand as they were read, cutting them by first byte, then
sorting each bucket again: at 100,000 trials (400,000 records) about 0.2 s of the seal,
more than half of it. The writer already touches each record once, as it appends it;
putting it in its bucket there costs one index more, and leaves the seal one sort of
each bucket, a 256th of the records at a time.

A bucket's records wait in memory up to ``HELD`` bytes, then go to an unnamed scratch
file, so the memory is flat (at most 256 × ``HELD``) however long the run.
"""

from __future__ import annotations

import functools
import os
import re
import struct
import tempfile
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import IO

from assay.evidence._index_out import index_written

HELD = 8_192
"""Bytes of one bucket's records kept in memory before they go to the scratch file."""


class Buckets:
    """Fixed-size records of *width* bytes, by first byte; ``held[b]`` is bucket *b*'s
    part still in memory (the writer appends to it and calls ``spill(b)`` past ``HELD``)."""

    __slots__ = ("_directory", "_file", "_size", "_spilled", "held", "width")

    def __init__(self, width: int, directory: Path) -> None:
        self.width = width
        self.held = [bytearray() for _ in range(256)]
        self._spilled: list[list[tuple[int, int]]] = [[] for _ in range(256)]
        self._directory = directory
        self._file: IO[bytes] | None = None
        self._size = 0

    def add(self, record: bytes) -> None:
        """Keep *record* (the store's hot path inlines this)."""
        held = self.held[record[0]]
        held += record
        if len(held) >= HELD:
            self.spill(record[0])

    def add_many(self, records: list[bytes]) -> None:
        """``add`` each of *records* (a flush's bundle records): one Python step a
        record, the buckets grown past ``HELD`` spilled after."""
        held = self.held
        for record in records:
            held[record[0]] += record
        touched = range(256) if len(records) > 256 else {record[0] for record in records}
        for bucket in touched:
            if len(held[bucket]) >= HELD:
                self.spill(bucket)

    def spill(self, bucket: int) -> None:
        """Move bucket *bucket*'s held records to the scratch file."""
        if self._file is None:
            self._file = tempfile.TemporaryFile(dir=self._directory)  # noqa: SIM115
        held = self.held[bucket]
        self._spilled[bucket].append((self._size, len(held)))
        self._file.write(held)
        self._size += len(held)
        held.clear()

    def bucket(self, bucket: int) -> bytes:
        """Every record of *bucket*, in the order they came."""
        parts = []
        if self._spilled[bucket]:
            assert self._file is not None
            self._file.flush()  # pread reads the file, not the write buffer
            fd = self._file.fileno()
            parts = [os.pread(fd, size, start) for start, size in self._spilled[bucket]]
        parts.append(bytes(self.held[bucket]))
        return b"".join(parts)

    def chunks(self) -> Iterator[bytes]:
        """Every record, a bucket at a time (each chunk a whole number of records)."""
        for bucket in range(256):
            if self.held[bucket] or self._spilled[bucket]:
                yield self.bucket(bucket)

    def write_sorted(self, index: Path) -> str:
        """Write every record to *index* in byte order: each bucket sorted alone, the
        buckets in order (written and hashed on a thread, ``index_written``: under a
        temporary name then renamed, so a kill while sealing leaves no torn index).
        Returns the index's SHA-256 (hex), for the manifest."""
        width = self.width
        with index_written(index) as out:
            for data in self.chunks():
                records = split_records(data, width)
                records.sort()
                out.write(b"".join(records))
        return out.digest

    def close(self) -> None:
        """Drop the scratch file (the records are gone with it)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def split_records(data: bytes | bytearray, width: int) -> list[bytes]:
    """*data* (a whole number of records) cut into its records of *width* bytes, in C,
    not a slice each: ``GROUP`` records at a time by one struct's ``iter_unpack``, the
    few left by a pattern's ``findall`` (which alone cost a third more: a match object
    a record; 37 against 27 ms for a 100,000-trial run's 400,000 pack records)."""
    whole = len(data) // (width * GROUP) * width * GROUP
    if not whole:  # a small bucket: the pattern alone
        return _splitter(width).findall(data)
    with memoryview(data) as view:  # released here: a bytearray may be cleared after
        records = list(chain.from_iterable(_grouper(width).iter_unpack(view[:whole])))
    if whole < len(data):
        records += _splitter(width).findall(data, whole)
    return records


GROUP = 64
"""Records one ``struct`` unpack cuts out (``split_records``)."""


@functools.cache
def _grouper(width: int) -> struct.Struct:
    """A struct of ``GROUP`` fields of *width* bytes."""
    return struct.Struct(f"{width}s" * GROUP)


@functools.cache
def _splitter(width: int) -> re.Pattern[bytes]:
    """A pattern matching any *width* bytes (newlines too)."""
    return re.compile(b".{%d}" % width, re.DOTALL)
