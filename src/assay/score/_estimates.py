"""The records of a run's metrics (``Metrics`` and its parts), as its report holds them.

Apart from ``_metrics`` (the builder, on the trial path): these are decoded by msgspec
from a report, which reads each field's type from the class's annotations, and a class
compiled by mypyc (pyproject's mypyc hook) keeps only their erased types (``list``, not
``list[MetricEstimate]``), so a report read back would hold dicts.
"""

from __future__ import annotations

import msgspec

from assay.score._bootstrap import MeanEstimate
from assay.score._intervals import DEFAULT_LEVEL, WILSON, wilson_interval


class MetricEstimate(msgspec.Struct, frozen=True):
    """A pass rate with its planned denominator, standard errors and confidence interval.

    ``cluster_stderr`` is set only when trials repeat samples (repetitions > 1): it is the
    stderr to believe then, since repeated trials of one sample are not independent.
    ``samples`` is the number of planned samples behind the denominator (the independent
    units; 0 when unknown, read as the denominator). ``informative_samples`` (with
    repetitions) is how many samples hold the rarer outcome: the fewer of the samples with
    a pass and those with a non-pass (0 when unknown); the gate's clustered bounds take
    their degrees of freedom from it.
    """

    target_id: str
    scorer_id: str
    value: float
    passed: int
    n: int
    denominator: int
    stderr: float
    statuses: dict[str, int]
    ci_low: float = 0.0
    ci_high: float = 1.0
    ci_level: float = DEFAULT_LEVEL
    ci_method: str = WILSON
    cluster_stderr: float | None = None
    samples: int = 0
    informative_samples: int = 0

    def interval(self, level: float) -> tuple[float, float]:
        """The Wilson interval at another *level* (the gate's, if it differs)."""
        if level == self.ci_level:
            return self.ci_low, self.ci_high
        return wilson_interval(self.passed, self.denominator, level)


class TargetCounts(msgspec.Struct, frozen=True):
    """How a target's planned trials ended."""

    target_id: str
    planned: int
    states: dict[str, int]


class Metrics(msgspec.Struct, frozen=True):
    """Every metric of a run: per target × scorer pass rates and per target trial states.

    ``means`` holds the mean score (with a bootstrap interval) of each target × scorer
    whose values were continuous; it is empty when every value was 0 or 1.
    """

    estimates: list[MetricEstimate]
    targets: list[TargetCounts]
    means: list[MeanEstimate] = []

    def estimate(self, target_id: str, scorer_id: str) -> MetricEstimate:
        """The estimate for one target and scorer."""
        for item in self.estimates:
            if item.target_id == target_id and item.scorer_id == scorer_id:
                return item
        raise KeyError((target_id, scorer_id))

    def mean_of(self, target_id: str, scorer_id: str) -> MeanEstimate | None:
        """The mean-score estimate for one target and scorer, if its scores were continuous."""
        for item in self.means:
            if item.target_id == target_id and item.scorer_id == scorer_id:
                return item
        return None

    def counts(self, target_id: str) -> TargetCounts:
        """The trial-state counts for one target."""
        for item in self.targets:
            if item.target_id == target_id:
                return item
        raise KeyError(target_id)
