"""Metrics over the *planned* trials: a trial with no score still counts against the rate.

``MetricsBuilder`` is fed one trial at a time (state and score statuses), keeping only
counters, so metrics for a million trials cost the same memory as for ten.
"""

from __future__ import annotations

import math
from collections import Counter

import msgspec


class MetricEstimate(msgspec.Struct, frozen=True):
    """A pass rate with its planned denominator and standard error."""

    target_id: str
    scorer_id: str
    value: float
    passed: int
    n: int
    denominator: int
    stderr: float
    statuses: dict[str, int]


class TargetCounts(msgspec.Struct, frozen=True):
    """How a target's planned trials ended."""

    target_id: str
    planned: int
    states: dict[str, int]


class Metrics(msgspec.Struct, frozen=True):
    """Every metric of a run: per target × scorer pass rates and per target trial states."""

    estimates: list[MetricEstimate]
    targets: list[TargetCounts]

    def estimate(self, target_id: str, scorer_id: str) -> MetricEstimate:
        """The estimate for one target and scorer."""
        for item in self.estimates:
            if item.target_id == target_id and item.scorer_id == scorer_id:
                return item
        raise KeyError((target_id, scorer_id))

    def counts(self, target_id: str) -> TargetCounts:
        """The trial-state counts for one target."""
        for item in self.targets:
            if item.target_id == target_id:
                return item
        raise KeyError(target_id)


class MetricsBuilder:
    """Accumulates trial states and score statuses; ``build`` divides by the plan."""

    def __init__(self, denominators: dict[str, int], scorer_ids: list[str]) -> None:
        self.denominators = denominators
        self.scorer_ids = scorer_ids
        self.states: dict[str, Counter[str]] = {t: Counter() for t in denominators}
        self.scores: dict[tuple[str, str], Counter[str]] = {
            (t, s): Counter() for t in denominators for s in scorer_ids
        }

    def add_trial(self, target_id: str, state: str) -> None:
        """Count one finished trial's state."""
        self.states[target_id][state] += 1

    def add_score(self, target_id: str, scorer_id: str, status: str) -> None:
        """Count one score's status."""
        self.scores[(target_id, scorer_id)][status] += 1

    def build(self) -> Metrics:
        """Pass rates over the planned denominators; unscored trials count as missing."""
        estimates = []
        for (target_id, scorer_id), statuses in self.scores.items():
            denominator = self.denominators[target_id]
            passed = statuses.get("passed", 0)
            n = sum(statuses.values())
            full = dict.fromkeys(("passed", "failed", "unscorable", "error"), 0)
            full.update(statuses)
            full["missing"] = denominator - n
            rate = passed / denominator if denominator else 0.0
            stderr = math.sqrt(rate * (1 - rate) / denominator) if denominator else 0.0
            estimates.append(
                MetricEstimate(target_id, scorer_id, rate, passed, n, denominator, stderr, full)
            )
        targets = []
        for target_id, states in self.states.items():
            full = dict.fromkeys(("completed", "blocked", "invalid"), 0)
            full.update(states)
            full["not_run"] = self.denominators[target_id] - sum(states.values())
            targets.append(TargetCounts(target_id, self.denominators[target_id], full))
        return Metrics(estimates, targets)
