"""Verify's pass over a pack file: every record hashed against its header, fast.

``scan_pack`` reads a record at a time and builds a ``PackRecord`` for each, which is
what sealing and resuming want; verify only needs each payload's SHA-256 compared with
its header's, so it walks the mapped file with ``find`` and hashes memoryview slices
(no copies, no objects per record). The record format and what counts as a broken
record are ``_pack``'s, checked here the same way.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from pathlib import Path

from assay.evidence._pack import _HEADER_MAX, MAGIC

_NEWLINE = ord("\n")


Mismatch = tuple[int, str, str]  # header offset, sha256 in the header, sha256 of the payload


def hash_pack(path: Path, good: set[str], bad: list[Mismatch]) -> tuple[int, int | None]:
    """Hash every record of the pack at *path*.

    Adds the sha256 of each record whose payload matches its header to *good* and
    appends each one that does not to *bad*. Returns how many records were hashed and
    the offset of the first record that is not a whole record (the walk stops there),
    or None when the pack is whole.
    """
    with open(path, "rb") as handle:
        length = os.fstat(handle.fileno()).st_size
        if length == 0:
            return 0, None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            view = memoryview(data)
            try:
                return _walk(data, view, length, good, bad)
            finally:
                view.release()


def _walk(
    data: mmap.mmap, view: memoryview, length: int, good: set[str], bad: list[Mismatch]
) -> tuple[int, int | None]:
    position, magic, sha256, find, keep = 0, len(MAGIC), hashlib.sha256, data.find, good.add
    records = 0
    while position < length:
        end = find(b"\n", position, position + _HEADER_MAX)
        if end < 0 or data[position : position + magic] != MAGIC:
            return records, position
        parts = data[position + magic : end].split(b" ")
        if len(parts) != 2 or not parts[1].isdigit():
            return records, position
        start = end + 1
        stop = start + int(parts[1])
        if stop + 1 > length or data[stop] != _NEWLINE:
            return records, position
        actual = sha256(view[start:stop]).hexdigest()
        records += 1
        if actual.encode() == parts[0]:
            keep(actual)
        else:
            bad.append((position, parts[0].decode("ascii", errors="replace"), actual))
        position = stop + 1
    return records, None
