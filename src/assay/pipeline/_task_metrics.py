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

from assay.score import Metric, SampleScore, Score, get_reducer, get_score_reducer, value_to_float

MetadataOf = Callable[[int], dict[str, Any]]
"""The metadata of the sample at a position (0-based, plan order)."""


class TaskMetricsBuilder:
    """Collects per-sample epoch values and computes the declared metrics at the end."""

    def __init__(
        self,
        epochs: int,
        reducers: list[str],
        metrics: dict[str, dict[str, Metric] | KeyedMetrics],
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
        # @score_reducers want each epoch's whole Score: kept only when one is in use
        self._score_reducers = {
            name: made for name in self.reducers if (made := get_score_reducer(name))
        }
        self._epoch_scores: dict[tuple[str, str, int], list[Score]] = {}
        self._values: dict[tuple[str, str, str], array[float]] = {}
        self._scored: dict[tuple[str, str], bytearray] = {}
        self._keys: dict[str, dict[str, None]] = {}  # a dict-valued scorer's keys, in order
        # one epoch reduced by the mean alone: a scalar score is its sample's value, stored
        # by ``add`` at once in its (target, scorer)'s stores, kept here once _reduce made them
        self._mean_only = epochs == 1 and self.reducers == ["mean"] and not self._score_reducers
        self._mean_stores: dict[tuple[str, str], tuple[bytearray, array[float]]] = {}
        self.wants_details = bool(self._score_reducers)
        """Whether ``add`` should be given each score's details (a ``@score_reducer`` is
        among the reducers); otherwise they are not made at all."""

    def add(
        self,
        trial: dict[str, Any],
        scorer_id: str,
        value: float | None,
        status: str,
        values: dict[str, float] | None = None,
        details: Score | None = None,
    ) -> None:
        """Count one trial's score; reduce the sample once its last epoch is in.

        *values* are a dict- or list-valued score's values by key: each key is reduced
        and measured on its own. A score without them from a scorer that gave keys
        before (an error) counts as 0 under each of those keys. *details* (the
        score's answer, explanation and metadata) are what a ``@score_reducer`` sees
        beside each epoch's value.
        """
        if values is None and scorer_id not in self._keys:  # a scalar score, the common case
            stores = self._mean_stores.get((trial["target_id"], scorer_id))
            if stores is None:
                self._add_one(trial, scorer_id, value, status, details)
                return
            position = trial["index"] // self.per_sample
            stores[0][position] = 1
            # _reduce's mean of one value: itself (and 0.0 for -0.0, as fsum gives it)
            stores[1][position] = value + 0.0 if value is not None and status != "error" else 0.0
            return
        if values is None:
            values = dict.fromkeys(self._keys[scorer_id], 0.0)
        for key, keyed in (values or {}).items():
            self._keys.setdefault(scorer_id, {})[key] = None
            self._add_one(trial, _keyed(scorer_id, key), keyed, status, details)
        self._add_one(trial, scorer_id, value, status, details)

    def _add_one(
        self,
        trial: dict[str, Any],
        scorer_id: str,
        value: float | None,
        status: str,
        details: Score | None = None,
    ) -> None:
        position = trial["index"] // self.per_sample
        target = trial["target_id"]
        counted = value if value is not None and status != "error" else 0.0
        if self.epochs == 1 and not self._score_reducers:  # nothing to wait for or keep
            self._reduce(target, scorer_id, position, [counted], [])
            return
        key = (target, scorer_id, position)
        values = self._pending.setdefault(key, [])
        values.append(counted)
        if self._score_reducers:
            self._epoch_scores.setdefault(key, []).append(_epoch_score(counted, details))
        if len(values) < self.epochs:
            return
        del self._pending[key]
        self._reduce(target, scorer_id, position, values, self._epoch_scores.pop(key, []))

    def _reduce(
        self, target: str, scorer_id: str, position: int, values: list[float], scores: list[Score]
    ) -> None:
        """Store a sample's epoch *values* (and *scores*, for ``@score_reducer``s) reduced
        by each reducer, and mark the sample scored."""
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
            made = self._score_reducers.get(name)
            reduced = value_to_float(made(scores).value) if made else get_reducer(name)(values)
            store[position] = reduced
        if self._mean_only:  # this (target, scorer)'s next scalar scores: stored by add
            self._mean_stores[(target, scorer_id)] = (
                scored,
                self._values[(target, scorer_id, "mean")],
            )

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
                out = result.setdefault(target, {}).setdefault(scorer_id, {})
                for key, chosen in self._measured(scorer_id, metrics):
                    stored = scorer_id if key is None else _keyed(scorer_id, key)
                    scored = self._scored.get((target, stored), empty_scored)
                    for reducer in self.reducers:
                        values = self._values.get((target, stored, reducer), empty_values)
                        for name, compute in chosen.items():
                            meta = self.metadata_of if _may_read_metadata(compute) else None
                            label = name if key is None else f"{key}/{name}"
                            label = label if reducer == "mean" else f"{reducer}/{label}"
                            # object, not Metric's float: a grouped metric gives a dict
                            measure: Callable[[_Scores], object] = compute
                            out[label] = measure(_Scores(values, scored, sample_ids, meta))
        return result

    def _measured(
        self, scorer_id: str, metrics: dict[str, Metric] | KeyedMetrics
    ) -> list[tuple[str | None, dict[str, Metric]]]:
        """What to measure for a scorer: its scalar values (key ``None``), or with a
        dict-valued score each key, with the metrics named for it (or for ``"*"``, or
        the scorer's list of metrics, as Inspect applies them)."""
        keys = list(self._keys.get(scorer_id, {}))
        if not isinstance(metrics, KeyedMetrics):
            return [(key, metrics) for key in keys] if keys else [(None, metrics)]
        chosen = [(key, metrics.get(key, metrics.get("*", {}))) for key in keys]
        return [(key, named) for key, named in chosen if named]


def _epoch_score(value: float, details: Score | None) -> Score:
    """One epoch's Score as a ``@score_reducer`` gets it: the value counted (on the
    metrics' scale; 0 for an error), with the scorer's answer, explanation, metadata."""
    if details is None:
        return Score(value=value)
    return Score(
        value=value,
        answer=details.answer,
        explanation=details.explanation,
        metadata=details.metadata,
    )


class KeyedMetrics(dict[str, dict[str, Metric]]):
    """A scorer's metrics by the key of its dict-valued scores (``metrics={"correct":
    [mean()], "*": [accuracy()]}`` on ``@scorer`` or ``Task``); ``"*"`` is every key
    not named."""


def _keyed(scorer_id: str, key: str) -> str:
    """Where a dict-valued score's key is kept (a separator no scorer id holds)."""
    return f"{scorer_id}\x1f{key}"


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

    def float_values(self) -> list[float]:
        """Every sample's value in order, without a ``SampleScore`` each (``values_of``)."""
        return self.values[: len(self)].tolist()
