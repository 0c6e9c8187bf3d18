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
from collections.abc import Iterator, Sequence
from typing import overload


class SpilledLines(Sequence[bytes]):
    """Byte strings appended to a scratch file, read back by position."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the object
        weakref.finalize(self, self._file.close)
        self._ends = array("Q")
        self._size = 0
        self._dirty = False

    def append(self, line: bytes) -> None:
        """Store *line* after the others."""
        self._file.write(line)
        self._size += len(line)
        self._ends.append(self._size)
        self._dirty = True

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
        end = self._ends[index]  # IndexError past the end, as a list would
        start = self._ends[index - 1] if index > 0 else 0
        if self._dirty:
            self._file.flush()
            self._dirty = False
        return os.pread(self._file.fileno(), end - start, start)

    def __iter__(self) -> Iterator[bytes]:
        for index in range(len(self._ends)):
            yield self[index]


class PackedText(Sequence[str]):
    """Short strings in one bytearray, with the end offset of each."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("Q")

    def append(self, text: str) -> None:
        """Store *text* after the others."""
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

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


def positions_of(items: Sequence[int]) -> array[int]:
    """Positions as a compact array (8 bytes each, not an int object each)."""
    return array("Q", items)
