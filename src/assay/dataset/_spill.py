"""Compact per-sample storage: encoded lines on disk, ids packed in one buffer.

A run reads a sample only when its trial gets a slot, so nothing but an offset per
sample needs to stay in memory. ``SpilledLines`` appends each encoded sample to an
anonymous scratch file (deleted by the OS when it is closed, or when the process
ends) and reads one back by position; ``PackedText`` keeps short strings (sample ids)
in one bytearray. Both cost 8 bytes per item of bookkeeping instead of a Python object.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, repeat
from operator import add
from typing import overload

READ_AHEAD = 1 << 16
"""Bytes read at once by ``SpilledLines`` when lines are read in order (memory: this)."""


class SpilledLines(Sequence[bytes]):
    """Byte strings appended to a scratch file, read back by position.

    Each is followed by a newline in the file: read in order (``blocks``), JSON lines
    come a block at a time, as a JSON-lines decoder takes them (one call, not one a line).
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the object
        weakref.finalize(self, self._file.close)
        self._ends = array("Q")  # where each line's newline ends
        self._size = 0
        self._dirty = False
        self._block = b""  # bytes read ahead, from offset _block_at: a run reads in order
        self._block_at = 0
        self._next = -1  # the index that, read next, means reading in order

    def append(self, line: bytes) -> None:
        """Store *line* after the others."""
        self._file.write(line + b"\n")
        self._size += len(line) + 1
        self._ends.append(self._size)
        self._dirty = True

    def extend(self, lines: list[bytes], joined: bytes | None = None) -> None:
        """Store *lines* after the others: one write, their ends summed in C. *joined*:
        the same lines each followed by a newline, when the caller has them so."""
        ends = array("Q", accumulate(map(add, map(len, lines), repeat(1)), initial=self._size))
        self._file.write(b"\n".join(lines) + b"\n" if joined is None else joined)
        self._size = ends[-1]
        self._ends.extend(ends[1:])
        self._dirty = True

    def blocks(self, first: int = 0) -> Iterator[bytes]:
        """The lines from *first* on, in order, each followed by its newline: whole lines,
        about ``READ_AHEAD`` bytes at a time (one line when it is longer)."""
        ends, at = self._ends, first
        while at < len(ends):
            start = ends[at - 1] if at > 0 else 0
            stop = max(bisect_right(ends, start + READ_AHEAD, at), at + 1)
            if self._dirty:
                self._file.flush()
                self._dirty = False
            yield os.pread(self._file.fileno(), ends[stop - 1] - start, start)
            at = stop

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self._ends)
        end = self._ends[index] - 1  # IndexError past the end, as a list would
        start = self._ends[index - 1] if index > 0 else 0
        in_order, self._next = index == self._next, index + 1
        at = self._block_at
        if at <= start and end <= at + len(self._block):  # lines never change once written
            return self._block[start - at : end - at]
        if self._dirty:
            self._file.flush()
            self._dirty = False
        if not in_order:  # random access (a shuffled plan): just this line
            return os.pread(self._file.fileno(), end - start, start)
        # in order (a run walking its plan): one read for the next lines, not one each
        self._block = os.pread(self._file.fileno(), max(end - start, READ_AHEAD), start)
        self._block_at = start
        return self._block[: end - start]

    def __iter__(self) -> Iterator[bytes]:
        return chain.from_iterable(map(_lines_of, self.blocks()))


def _lines_of(block: bytes) -> list[bytes]:
    """The lines of a block of ``SpilledLines.blocks``, without their newlines."""
    lines = block.split(b"\n")
    lines.pop()  # after the last newline: nothing
    return lines


class PackedText(Sequence[str]):
    """Short strings in one bytearray, with the end offset of each."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("Q")

    def append(self, text: str) -> None:
        """Store *text* after the others."""
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def extend(self, texts: list[str]) -> None:
        """Store *texts* after the others; ASCII ones (most ids) in one go, their byte
        lengths being their lengths."""
        joined = "".join(texts)
        if not joined.isascii():
            for text in texts:
                self.append(text)
            return
        self._ends.extend(array("Q", accumulate(map(len, texts), initial=len(self._data)))[1:])
        self._data += joined.encode("ascii")

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self._ends)
        end = self._ends[index]
        start = self._ends[index - 1] if index > 0 else 0
        return self._data[start:end].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        start = 0
        data = self._data
        for end in self._ends:
            yield data[start:end].decode("utf-8", "surrogatepass")
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedText | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list


class HashSet:
    """A set of 64-bit hashes in one array (open addressing), about 16 bytes an item.

    Python's own ``set`` of 100,000 ids costs ~10 MB of objects; this costs 1.6 MB.
    ``add`` says whether the hash was there already; a caller that needs certainty
    confirms a hit against the real values (two different ids sharing all 64 bits is
    astronomically rare, but possible).
    """

    def __init__(self) -> None:
        self._table = array("q", bytes(8 * 1024))
        self._count = 0

    def add(self, value: int) -> bool:
        """Insert *value*'s hash; ``True`` if an equal hash was already in."""
        if 2 * (self._count + 1) > len(self._table):
            self._grow()
        return self._insert(self._table, (value & _MASK) or 1)

    def _insert(self, table: array[int], key: int) -> bool:
        mask = len(table) - 1
        slot = key & mask
        while True:
            held = table[slot]
            if held == 0:
                table[slot] = key
                self._count += 1
                return False
            if held == key:
                return True
            slot = (slot + 1) & mask

    def _grow(self) -> None:
        old = self._table
        self._table = array("q", bytes(16 * len(old)))
        self._count = 0
        for key in old:
            if key:
                self._insert(self._table, key)


_MASK = (1 << 63) - 1  # hashes kept non-negative, so they fit a signed 64-bit slot


def positions_of(items: Sequence[int]) -> array[int]:
    """Positions as a compact array (8 bytes each, not an int object each)."""
    return array("Q", items)
