"""``select``: the subset of a dataset a run asks for, by count, slice or sample id.

Ids are filled in as 1..n by position first, exactly as ``freeze`` would, so
``sample_id=3`` finds the third sample of a dataset written without ids, and the
selected samples keep the ids they would have had in the whole dataset.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import TypeAlias

from assay.dataset._jsonl import Dataset
from assay.dataset._memory import DEFAULT_NAME, MemoryDataset, SampleView
from assay.dataset._sample import Sample
from assay.errors import ConfigError

Limit: TypeAlias = int | tuple[int, int]
"""The first *n* samples, or a ``(start, stop)`` slice of them (0-based, stop excluded)."""

SampleIds: TypeAlias = str | int | Sequence[str | int]
"""One sample id or several; ``3`` and ``"3"`` name the same sample, as in trial ids."""


def select(
    dataset: Iterable[Sample],
    *,
    limit: Limit | None = None,
    sample_id: SampleIds | None = None,
) -> MemoryDataset:
    """The samples of *dataset* that *sample_id* names, then the first *limit* of them.

    Samples stay in dataset order, and *dataset* itself is left as it was.

    Args:
        dataset: a ``MemoryDataset``, a loaded JSONL ``Dataset`` or any samples.
        limit: ``10`` keeps the first ten samples, ``(5, 10)`` the sixth to the tenth.
        sample_id: keep only the samples with these ids.

    Raises:
        ConfigError: *limit* is malformed, or an id in *sample_id* names no sample
            (every such id is named).
    """
    window = _window(limit)
    base = _samples(dataset)
    positions: range | array[int] = range(len(base))
    if sample_id is not None:
        wanted = _id_keys(sample_id)
        found: set[str] = set()
        kept = array("Q")
        for index, sample in enumerate(base):
            key = str(sample.id if sample.id is not None else index + 1)
            if key in wanted:
                kept.append(index)
                found.add(key)
        missing = set(wanted) - found
        if missing:
            shown = ", ".join(repr(wanted[key]) for key in wanted if key in missing)
            raise ConfigError("dataset.unknown_id", name=_name(dataset), missing=shown)
        positions = kept
    # a view, not a copy: a sample is read (and numbered) only when it is used
    view = SampleView(base, positions[window], number=True)
    if isinstance(dataset, MemoryDataset):
        return dataset._derived(view)  # keeps its folder and source
    return MemoryDataset(view, _name(dataset))


def _samples(dataset: Iterable[Sample]) -> Sequence[Sample]:
    if isinstance(dataset, MemoryDataset):
        return dataset.samples
    if isinstance(dataset, Sequence):
        return dataset
    return list(dataset)


def _window(limit: Limit | None) -> slice:
    if limit is None:
        return slice(None)
    if _is_count(limit):
        return slice(0, limit)
    # a list too: a run's record read back from JSON has the (start, stop) pair as one
    if isinstance(limit, tuple | list) and len(limit) == 2 and all(map(_is_count, limit)):
        start, stop = limit
        if start <= stop:
            return slice(start, stop)
    raise ConfigError("dataset.limit", limit=limit)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _id_keys(sample_id: SampleIds) -> dict[str, str | int]:
    """The wanted ids as trial-id text, each mapped to the id as it was asked for."""
    ids = [sample_id] if isinstance(sample_id, str | int) else list(sample_id)
    return {str(i): i for i in ids}


def _name(dataset: Iterable[Sample]) -> str:
    if isinstance(dataset, MemoryDataset):
        return dataset.name
    if isinstance(dataset, Dataset):
        return dataset.display
    return DEFAULT_NAME
