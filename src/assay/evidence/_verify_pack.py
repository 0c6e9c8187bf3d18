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
from collections.abc import Callable
from pathlib import Path

from assay.evidence._pack import _HEADER_MAX, MAGIC

_NEWLINE = ord("\n")


def hash_pack(
    path: Path, good: Callable[[str], None], bad: Callable[[int, str, str], None]
) -> int | None:
    """Hash every record of the pack at *path*.

    Calls ``good(sha256)`` for a record whose payload matches its header and
    ``bad(header_offset, header_sha256, actual_sha256)`` for one that does not. Returns
    the offset of the first record that is not a whole record (the walk stops there), or
    None when the pack is whole.
    """
    with open(path, "rb") as handle:
        length = os.fstat(handle.fileno()).st_size
        if length == 0:
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            view = memoryview(data)
            try:
                return _walk(data, view, length, good, bad)
            finally:
                view.release()


def _walk(
    data: mmap.mmap,
    view: memoryview,
    length: int,
    good: Callable[[str], None],
    bad: Callable[[int, str, str], None],
) -> int | None:
    position, magic, sha256 = 0, len(MAGIC), hashlib.sha256
    while position < length:
        end = data.find(b"\n", position, position + _HEADER_MAX)
        if end < 0 or data[position : position + magic] != MAGIC:
            return position
        parts = data[position + magic : end].split(b" ")
        if len(parts) != 2 or not parts[1].isdigit():
            return position
        start = end + 1
        stop = start + int(parts[1])
        if stop + 1 > length or data[stop] != _NEWLINE:
            return position
        actual = sha256(view[start:stop]).hexdigest()
        expected = parts[0].decode("ascii", errors="replace")
        if actual == expected:
            good(actual)
        else:
            bad(position, expected, actual)
        position = stop + 1
    return None
