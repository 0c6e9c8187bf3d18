"""Samples kept as encoded lines, and some samples of a dataset by position: what
``MemoryDataset`` holds instead of a Python object per sample (see ``_memory``)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import cast, overload

import msgspec

from assay.dataset._jsonl import decoded
from assay.dataset._sample import Sample
from assay.dataset._spill import PackedText, SpilledLines

_decode = msgspec.json.Decoder(Sample).decode
_ID = attrgetter("id")


class LineSamples(Sequence[Sample]):
    """Samples kept as encoded lines in a scratch file, decoded when read.

    The lines are already what ``freeze`` would write (numbered, checked, canonical),
    so freezing all of them in order reuses the file, its *digest* and *ids* as they are.
    """

    def __init__(self, lines: SpilledLines, digest: str, ids: PackedText) -> None:
        self.lines = lines
        self.digest = digest
        self.ids = ids

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleView: ...
    def __getitem__(self, index: int | slice) -> Sample | SampleView:
        if isinstance(index, slice):
            return SampleView(self, range(len(self))[index])
        return _decode(self.lines[index])

    def __iter__(self) -> Iterator[Sample]:
        return decoded(self.lines)  # a block of lines a call


class SampleView(Sequence[Sample]):
    """Some samples of *base*, by position; with *number*, a sample without an id gets
    its position in *base* + 1 (the id ``select`` promises, whatever is selected)."""

    def __init__(
        self, base: Sequence[Sample], positions: range | array[int], *, number: bool = False
    ) -> None:
        self.base = base
        self.positions = positions
        self.number = number

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleView: ...
    def __getitem__(self, index: int | slice) -> Sample | SampleView:
        if isinstance(index, slice):
            return SampleView(self.base, self.positions[index], number=self.number)
        position = self.positions[index]
        sample = self.base[position]
        return _numbered(sample, position) if self.number and sample.id is None else sample

    def __iter__(self) -> Iterator[Sample]:
        # what ``self[index]`` gives, without its call and checks a sample
        base, number = self.base, self.number
        for position in self.positions:
            sample = base[position]
            yield _numbered(sample, position) if number and sample.id is None else sample

    def chunks(self, size: int) -> Iterator[list[Sample]]:
        """The samples in order, *size* at a time: a list's by slicing (no Python step
        a sample), numbered by position where ``number`` asks for it."""
        base, positions = self.base, self.positions
        sliced = isinstance(base, list) and isinstance(positions, range) and positions.step == 1
        for at in range(0, len(positions), size):
            where = positions[at : at + size]
            chunk = (
                cast("list[Sample]", base)[where.start : where.stop]  # type: ignore[union-attr]
                if sliced
                else list(map(base.__getitem__, where))
            )
            if self.number and None in map(_ID, chunk):
                chunk = [
                    s if s.id is not None else _numbered(s, p)
                    for p, s in zip(where, chunk, strict=True)
                ]
            yield chunk


def _numbered(sample: Sample, position: int) -> Sample:
    """*sample*, which has no id, with the id ``select`` promises: its position + 1."""
    return msgspec.structs.replace(sample, id=position + 1)
