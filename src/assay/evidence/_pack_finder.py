"""``PackFinder``: many lookups in one pack's index, for a reader (re-scoring a run).

Apart from ``_index`` (what writes the indexes, on the trial path): a finder closes its
descriptor through ``weakref.finalize``, and a class compiled by mypyc
(pyproject's mypyc hook) takes no weak references.
"""

from __future__ import annotations

import array
import bisect
import os
import sys
import weakref
from pathlib import Path

from assay.evidence._index import _PACK, pack_index


class PackFinder:
    """Many lookups in one pack's ``.idx`` (re-scoring a whole run): the first four
    bytes of every digest held as one array (4 bytes a record, where a dict of every
    record held ~250), bisected in C; the few records sharing a prefix are read with
    ``pread``. The index stays on disk and nothing of it is mapped, so memory is flat.
    ``open`` returns ``None`` when *pack* has no index this code wrote."""

    def __init__(self, fd: int, prefixes: array.array[int]) -> None:
        self._fd, self._prefixes = fd, prefixes
        self._closed = weakref.finalize(self, os.close, fd)  # a store never closed too

    @classmethod
    def open(cls, pack: Path) -> PackFinder | None:
        try:
            fd = os.open(pack_index(pack), os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            size = os.fstat(fd).st_size
            if size % _PACK.size:
                os.close(fd)
                return None  # not an index this code wrote: scan the pack instead
            return cls(fd, _prefixes(fd, size))
        except BaseException:
            os.close(fd)
            raise

    def find(self, sha256: str) -> tuple[int, int] | None:
        """``(offset, size)`` of *sha256*'s payload (the first record of that digest)."""
        key = bytes.fromhex(sha256)
        prefix = int.from_bytes(key[:4], "big")
        prefixes = self._prefixes
        at = bisect.bisect_left(prefixes, prefix)
        while at < len(prefixes) and prefixes[at] == prefix:
            sha, offset, size = _PACK.unpack(os.pread(self._fd, _PACK.size, at * _PACK.size))
            if sha == key:
                return offset, size
            at += 1
        return None

    def close(self) -> None:
        self._closed()


def _prefixes(fd: int, size: int) -> array.array[int]:
    """The big-endian first four bytes of each record of the index open as *fd*, as
    unsigned ints, read a few thousand records at a time (slices in C, no loop)."""
    width = _PACK.size
    prefixes = array.array("I")
    step = width * 16_384
    for start in range(0, size, step):
        chunk = os.pread(fd, min(step, size - start), start)
        count = len(chunk) // width
        heads = bytearray(4 * count)
        for byte in range(4):  # the key's bytes 0..3, in machine order below
            heads[byte::4] = chunk[byte::width]
        part = array.array("I", bytes(heads))
        if sys.byteorder == "little":
            part.byteswap()
        prefixes.extend(part)
    return prefixes
