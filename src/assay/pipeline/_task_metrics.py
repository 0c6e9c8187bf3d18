"""Metrics of Python tasks: scores reduced over epochs per sample, then each metric.

Trials of one sample sit next to each other in plan order, so a sample's epoch values
are held only until its last epoch is judged; then they are reduced to one value per
reducer and kept as a float. Samples that never produced a score count as 0 in every
metric (the denominator is the plan's).
"""

from __future__ import annotations

from typing import Any

from assay.score import Metric, SampleScore, get_reducer


class TaskMetricsBuilder:
    """Collects per-sample epoch values and computes the declared metrics at the end."""

    def __init__(
        self,
        epochs: int,
        reducers: list[str],
        metrics: dict[str, dict[str, Metric]],
        sample_metadata: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.epochs = epochs
        self.reducers = reducers or ["mean"]
        self.metrics = metrics
        self.sample_metadata = sample_metadata or {}
        self._pending: dict[tuple[str, str, str], list[float]] = {}
        self._reduced: dict[tuple[str, str, str], list[SampleScore]] = {}

    def add(self, trial: dict[str, Any], scorer_id: str, value: float | None, status: str) -> None:
        """Count one trial's score; reduce the sample once its last epoch is in."""
        key = (trial["target_id"], scorer_id, str(trial["sample_id"]))
        values = self._pending.setdefault(key, [])
        values.append(value if value is not None and status != "error" else 0.0)
        if len(values) == self.epochs:
            del self._pending[key]
            meta = self.sample_metadata.get(key[2], {})
            for name in self.reducers:
                reduced = SampleScore(get_reducer(name)(values), key[2], meta)
                self._reduced.setdefault((key[0], scorer_id, name), []).append(reduced)

    def build(self, sample_ids: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """``{target: {scorer: {"<reducer>/<metric>": value}}}`` over every planned sample."""
        result: dict[str, dict[str, dict[str, Any]]] = {}
        targets = {k[0] for k in self._reduced} | {k[0] for k in self._pending}
        for target in sorted(targets):
            for scorer_id, metrics in self.metrics.items():
                for reducer in self.reducers:
                    scores = self._complete(target, scorer_id, reducer, sample_ids)
                    values = result.setdefault(target, {}).setdefault(scorer_id, {})
                    for name, compute in metrics.items():
                        label = name if reducer == "mean" else f"{reducer}/{name}"
                        values[label] = compute(scores)
        return result

    def _complete(
        self, target: str, scorer_id: str, reducer: str, sample_ids: list[str]
    ) -> list[SampleScore]:
        scores = {s.sample_id: s for s in self._reduced.get((target, scorer_id, reducer), [])}
        return [
            scores.get(sid)
            or SampleScore(0.0, sid, self.sample_metadata.get(sid, {}), scored=False)
            for sid in sample_ids
        ]
