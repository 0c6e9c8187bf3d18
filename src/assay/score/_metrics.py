"""Metrics over the *planned* trials: a trial with no score still counts against the rate.

``MetricsBuilder`` is fed one trial at a time (state, score statuses and values), keeping
counters and one float per sample, so metrics for a million trials cost a few megabytes.
Each pass rate carries a Wilson interval at a declared level; with repetitions, a stderr
clustered by sample too, built from per-sample counters that are dropped as soon as a
sample's last repetition is in (trials of one sample are adjacent in plan order). A
scorer whose values are not all 0 or 1 (partial credit) also gets a ``MeanEstimate``: the
mean value with a bootstrap interval, resampled by sample.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from typing import Any

from assay.score._bootstrap import (
    BOOTSTRAP,
    CLUSTER_BOOTSTRAP,
    RESAMPLES,
    MeanEstimate,
    bootstrap_mean,
    seed_of,
)
from assay.score._estimates import MetricEstimate, Metrics, TargetCounts
from assay.score._intervals import DEFAULT_LEVEL, cluster_stderr, wilson_interval


class _Clusters:
    """Per-sample pass counts of one (target, scorer), reduced to two sums as samples end."""

    def __init__(self, repetitions: int) -> None:
        self.repetitions = repetitions
        self.pending: dict[str, list[int]] = {}
        self.sum_means = 0.0
        self.sum_squares = 0.0
        self.with_pass = 0
        self.all_passed = 0

    def add(self, sample_id: str, passed: bool) -> None:
        counts = self.pending.setdefault(sample_id, [0, 0])
        counts[0] += 1
        counts[1] += int(passed)
        if counts[0] >= self.repetitions:
            self._close(self.pending.pop(sample_id))

    def _close(self, counts: list[int]) -> None:
        mean = counts[1] / self.repetitions
        self.sum_means += mean
        self.sum_squares += mean * mean
        self.with_pass += counts[1] > 0
        self.all_passed += counts[1] >= self.repetitions

    def informative(self, samples: int) -> int:
        """Samples holding the rarer outcome (a sample never scored never passed)."""
        return min(self.with_pass, samples - self.all_passed)

    def stderr(self, samples: int) -> float | None:
        for counts in self.pending.values():  # samples cut short: unrun trials count as fails
            self._close(counts)
        self.pending.clear()
        return cluster_stderr(self.sum_means, self.sum_squares, samples)


class _Means:
    """One (target, scorer)'s values, one per sample (its mean over repetitions): a byte
    each while every one is 0 or 1, as a pass/fail scorer's are (1 MB at a million
    samples, not 8), a float each once one is not."""

    def __init__(self, repetitions: int) -> None:
        self.repetitions = repetitions
        self.pending: dict[str, list[float]] = {}  # a sample's values until its last repetition
        self.values: array[Any] = array("B")
        self.continuous = False

    def add(self, sample_id: str | None, value: float) -> None:
        binary = value in (0.0, 1.0)
        if not binary:
            self.continuous = True
        if self.repetitions == 1 or sample_id is None:
            if binary and self.values.typecode == "B":  # _keep's common case, inlined
                self.values.append(int(value))
            else:
                self._keep(value)
            return
        values = self.pending.setdefault(sample_id, [])
        values.append(value)
        if len(values) >= self.repetitions:
            # fsum is exactly rounded: the repetitions' order (a resume) cannot matter
            self._keep(math.fsum(self.pending.pop(sample_id)) / self.repetitions)

    def _keep(self, value: float) -> None:
        if self.values.typecode == "B":
            if value in (0.0, 1.0):
                self.values.append(int(value))
                return
            self.values = array("d", self.values)  # 0 and 1 exactly, as floats
        self.values.append(value)

    def estimate(
        self, target_id: str, scorer_id: str, denominator: int, level: float
    ) -> MeanEstimate:
        for values in self.pending.values():  # cut short: unrun trials count as 0
            self._keep(math.fsum(values) / self.repetitions)
        self.pending.clear()
        clustered = self.repetitions > 1
        units = denominator // self.repetitions if clustered else denominator
        missing = max(0, units - len(self.values))
        values = [*map(float, self.values), *([0.0] * missing)]
        seed = seed_of(target_id, scorer_id)
        mean, stderr, low, high = bootstrap_mean(values, level, seed)
        method = CLUSTER_BOOTSTRAP if clustered else BOOTSTRAP
        return MeanEstimate(
            target_id,
            scorer_id,
            mean,
            len(values),
            denominator,
            stderr,
            low,
            high,
            level,
            method,
            RESAMPLES,
            seed,
        )


class MetricsBuilder:
    """Accumulates trial states and score statuses; ``build`` divides by the plan.

    *repetitions* > 1 (with ``sample_id`` given to ``add_score``) adds a stderr clustered
    by sample; *confidence* is the level of every interval (the gate policy's).
    """

    def __init__(
        self,
        denominators: dict[str, int],
        scorer_ids: list[str],
        repetitions: int = 1,
        confidence: float = DEFAULT_LEVEL,
    ) -> None:
        self.denominators = denominators
        self.scorer_ids = scorer_ids
        self.repetitions = repetitions
        self.confidence = confidence
        self.states: dict[str, Counter[str]] = {t: Counter() for t in denominators}
        self.scores: dict[tuple[str, str], Counter[str]] = {
            (t, s): Counter() for t in denominators for s in scorer_ids
        }
        self.clusters: dict[tuple[str, str], _Clusters] = {}
        self.means: dict[tuple[str, str], _Means] = {}

    def add_trial(self, target_id: str, state: str) -> None:
        """Count one finished trial's state."""
        self.states[target_id][state] += 1

    def add_score(
        self,
        target_id: str,
        scorer_id: str,
        status: str,
        sample_id: str | None = None,
        value: float | None = None,
    ) -> None:
        """Count one score's status (and, with repetitions, its sample's pass count).

        *value* is the score's value in [0, 1] (``None``, as for an unscorable trial,
        counts as 0); without it a pass counts 1 and anything else 0.
        """
        key = (target_id, scorer_id)
        self.scores[key][status] += 1
        means = self.means.get(key)
        if means is None:
            means = self.means[key] = _Means(self.repetitions)
        if value is None or status == "error":
            value = 1.0 if status == "passed" else 0.0
        means.add(sample_id, float(value))
        if self.repetitions > 1 and sample_id is not None:
            if key not in self.clusters:
                self.clusters[key] = _Clusters(self.repetitions)
            self.clusters[key].add(str(sample_id), status == "passed")

    def add_pass(
        self, target_id: str, scorer_id: str, passed: bool, sample_id: object, state: str = ""
    ) -> None:
        """``add_score`` of a pass valued 1.0 or a fail valued 0.0 (a pass/fail scorer's
        verdict; *sample_id* as the plan has it): counted in place while the values kept
        are bytes and no trial repeats. With a *state*, ``add_trial`` of it too (the
        judge of one scorer: one call a trial, not two)."""
        if state:
            self.states[target_id][state] += 1
        key = (target_id, scorer_id)
        means = self.means.get(key)
        if means is None or self.repetitions > 1 or means.values.typecode != "B":
            status, value = ("passed", 1.0) if passed else ("failed", 0.0)
            self.add_score(target_id, scorer_id, status, str(sample_id), value)
            return
        self.scores[key]["passed" if passed else "failed"] += 1
        means.values.append(passed)  # _Means.add of 1.0 or 0.0: what _keep keeps

    def build(self) -> Metrics:
        """Pass rates over the planned denominators; unscored trials count as missing."""
        estimates = [self._estimate(t, s, statuses) for (t, s), statuses in self.scores.items()]
        targets = []
        for target_id, states in self.states.items():
            full = dict.fromkeys(("completed", "blocked", "invalid"), 0)
            full.update(states)
            full["not_run"] = self.denominators[target_id] - sum(states.values())
            targets.append(TargetCounts(target_id, self.denominators[target_id], full))
        means = [
            m.estimate(t, s, self.denominators[t], self.confidence)
            for (t, s) in self.scores
            if (m := self.means.get((t, s))) is not None and m.continuous
        ]
        return Metrics(estimates, targets, means)

    def _estimate(self, target_id: str, scorer_id: str, statuses: Counter[str]) -> MetricEstimate:
        denominator = self.denominators[target_id]
        passed = statuses.get("passed", 0)
        n = sum(statuses.values())
        full = dict.fromkeys(("passed", "failed", "unscorable", "error"), 0)
        full.update(statuses)
        full["missing"] = denominator - n
        rate = passed / denominator if denominator else 0.0
        stderr = math.sqrt(rate * (1 - rate) / denominator) if denominator else 0.0
        low, high = wilson_interval(passed, denominator, self.confidence)
        clusters = self.clusters.get((target_id, scorer_id))
        clustered = clusters.stderr(denominator // self.repetitions) if clusters else None
        informative = clusters.informative(denominator // self.repetitions) if clusters else 0
        return MetricEstimate(
            target_id,
            scorer_id,
            rate,
            passed,
            n,
            denominator,
            stderr,
            full,
            ci_low=low,
            ci_high=high,
            ci_level=self.confidence,
            cluster_stderr=clustered,
            samples=denominator // self.repetitions,
            informative_samples=informative,
        )
