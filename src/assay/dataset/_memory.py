"""Python datasets: samples in memory, with the usual list operations.

A dataset in code becomes the same raw-line ``Dataset`` a JSONL file does before a run
(``freeze``): ids are filled in as 1..n where missing, duplicates are refused, and the
digest is taken over the canonical lines, so a Python dataset is pinned like a file.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import msgspec

from assay.dataset._jsonl import Dataset
from assay.dataset._sample import Sample
from assay.errors import ConfigError

_encode = msgspec.json.Encoder(order="sorted").encode

DEFAULT_NAME = "memory"


class MemoryDataset(Sequence[Sample]):
    """A list of samples with ``filter``, ``sort``, ``shuffle`` and slicing.

    Every operation returns a new dataset and leaves this one as it was, so a task can
    derive subsets of one loaded dataset without the subsets seeing each other.
    """

    def __init__(self, samples: Iterable[Sample], name: str | None = None) -> None:
        self.samples = list(samples)
        self.name = name or DEFAULT_NAME
        for index, sample in enumerate(self.samples):
            if not isinstance(sample, Sample):
                # Caught here, where the list was built, not deep inside a run.
                raise ConfigError(
                    "dataset.not_sample", name=self.name, index=index, kind=type(sample).__name__
                )

    def __repr__(self) -> str:
        return f"MemoryDataset(name={self.name!r}, samples={len(self.samples)})"

    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> MemoryDataset: ...

    def __getitem__(self, index: int | slice) -> Sample | MemoryDataset:
        if isinstance(index, slice):
            return MemoryDataset(self.samples[index], self.name)
        return self.samples[index]

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def filter(self, predicate: Callable[[Sample], bool]) -> MemoryDataset:
        """The samples for which *predicate* is true."""
        return MemoryDataset([s for s in self.samples if predicate(s)], self.name)

    def sort(self, key: Callable[[Sample], Any], reverse: bool = False) -> MemoryDataset:
        """The samples ordered by *key*."""
        return MemoryDataset(sorted(self.samples, key=key, reverse=reverse), self.name)

    def shuffle(self, seed: int | None = None) -> MemoryDataset:
        """The samples in a random order; the same *seed* gives the same order anywhere.

        ``random.Random(seed)`` with an integer seed does not depend on the process or
        its hash seed, so a shuffled dataset is as reproducible as the seed is recorded.
        Without a seed, each call gives a new order.
        """
        shuffled = list(self.samples)
        random.Random(seed).shuffle(shuffled)
        return MemoryDataset(shuffled, self.name)


def refuse_duplicates(samples: Sequence[Sample], positions: Iterable[int], display: str) -> None:
    """Raise ConfigError naming both positions of the first id used twice."""
    first: dict[str, int] = {}
    for sample, position in zip(samples, positions, strict=True):
        key = str(sample.id)
        if key in first:
            shown = key if len(key) <= 80 else key[:77] + "..."
            raise ConfigError(
                "dataset.duplicate_id",
                path=display,
                line=position,
                sample_id=shown,
                first=first[key],
            )
        first[key] = position


def freeze(samples: Sequence[Sample], display: str) -> Dataset:
    """Number unnamed samples 1..n, refuse duplicate ids, and pin the result by digest."""
    numbered = [
        s if s.id is not None else msgspec.structs.replace(s, id=number)
        for number, s in enumerate(samples, start=1)
    ]
    refuse_duplicates(numbered, range(1, len(numbered) + 1), display)
    lines = [_encode(sample) for sample in numbered]
    ids = [str(sample.id) for sample in numbered]
    if not lines:
        raise ConfigError("dataset.empty", path=display)
    digest = "sha256:" + hashlib.sha256(b"\n".join(lines)).hexdigest()
    return Dataset(display, digest, lines, ids)
