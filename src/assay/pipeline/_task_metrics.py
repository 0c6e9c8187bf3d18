"""Metrics of Python tasks: scores reduced over epochs per sample, then each metric.

A trial's sample is found from its plan index (plan order is sample-major), and a
sample's epoch values are held only until its last epoch is judged; then they are
reduced to one float per reducer, stored in a compact array at the sample's position
(8 bytes a sample, not a Python object). Samples that never produced a score count as
0 in every metric (the denominator is the plan's). Metrics see the samples in plan
order, in the run and in ``assay score`` alike, as a sequence that makes each
``SampleScore`` when it is read; a sample's metadata is read back from the frozen
dataset only for metrics that may look at it (``grouped`` and user metrics).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from assay.score import Metric, SampleScore, get_reducer

MetadataOf = Callable[[int], dict[str, Any]]
"""The metadata of the sample at a position (0-based, plan order)."""


class TaskMetricsBuilder:
    """Collects per-sample epoch values and computes the declared metrics at the end."""

    def __init__(
        self,
        epochs: int,
        reducers: list[str],
        metrics: dict[str, dict[str, Metric]],
        samples: int,
        metadata_of: MetadataOf | None = None,
        targets: int = 1,
    ) -> None:
        self.epochs = epochs
        self.reducers = reducers or ["mean"]
        self.metrics = metrics
        self.samples = samples
        self.metadata_of = metadata_of
        self.per_sample = epochs * targets  # trials of one sample, adjacent in the plan
        self._pending: dict[tuple[str, str, int], list[float]] = {}
        self._values: dict[tuple[str, str, str], array[float]] = {}
        self._scored: dict[tuple[str, str], bytearray] = {}

    def add(self, trial: dict[str, Any], scorer_id: str, value: float | None, status: str) -> None:
        """Count one trial's score; reduce the sample once its last epoch is in."""
        position = trial["index"] // self.per_sample
        key = (trial["target_id"], scorer_id, position)
        values = self._pending.setdefault(key, [])
        values.append(value if value is not None and status != "error" else 0.0)
        if len(values) < self.epochs:
            return
        del self._pending[key]
        target = trial["target_id"]
        scored = self._scored.get((target, scorer_id))
        if scored is None:
            scored = self._scored[(target, scorer_id)] = bytearray(self.samples)
        scored[position] = 1
        for name in self.reducers:
            store = self._values.get((target, scorer_id, name))
            if store is None:
                store = self._values[(target, scorer_id, name)] = array(
                    "d", bytes(8 * self.samples)
                )
            store[position] = get_reducer(name)(values)

    def build(self, sample_ids: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """``{target: {scorer: {"<reducer>/<metric>": value}}}`` over every planned sample.

        *sample_ids* are the planned samples' ids in plan order.
        """
        result: dict[str, dict[str, dict[str, Any]]] = {}
        targets = {k[0] for k in self._scored} | {k[0] for k in self._pending}
        empty_values = array("d", bytes(8 * self.samples))
        empty_scored = bytearray(self.samples)
        for target in sorted(targets):
            for scorer_id, metrics in self.metrics.items():
                scored = self._scored.get((target, scorer_id), empty_scored)
                for reducer in self.reducers:
                    values = self._values.get((target, scorer_id, reducer), empty_values)
                    out = result.setdefault(target, {}).setdefault(scorer_id, {})
                    for name, compute in metrics.items():
                        meta = self.metadata_of if _may_read_metadata(compute) else None
                        label = name if reducer == "mean" else f"{reducer}/{name}"
                        out[label] = compute(_Scores(values, scored, sample_ids, meta))
        return result


def _may_read_metadata(compute: Metric) -> bool:
    """Whether *compute* may look at ``SampleScore.metadata``: every metric but assay's
    own plain ones (``accuracy``, ``mean``, ``std``, ``stderr``, ``bootstrap_stderr``)."""
    module = getattr(compute, "__module__", "") or ""
    return not module.startswith("assay.score.") or module == "assay.score._grouped"


class _Scores(Sequence[SampleScore]):
    """Every planned sample's reduced score, made on reading from the compact arrays."""

    def __init__(
        self,
        values: array[float],
        scored: bytearray,
        sample_ids: Sequence[str],
        metadata_of: MetadataOf | None,
    ) -> None:
        self.values, self.scored, self.sample_ids = values, scored, sample_ids
        self.metadata_of = metadata_of

    def __len__(self) -> int:
        return len(self.sample_ids)

    @overload
    def __getitem__(self, index: int) -> SampleScore: ...
    @overload
    def __getitem__(self, index: slice) -> list[SampleScore]: ...
    def __getitem__(self, index: int | slice) -> SampleScore | list[SampleScore]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        meta = self.metadata_of(index) if self.metadata_of is not None else {}
        sample_id = self.sample_ids[index]
        return SampleScore(self.values[index], sample_id, meta, scored=bool(self.scored[index]))

    def __iter__(self) -> Iterator[SampleScore]:
        for index in range(len(self)):
            yield self[index]
