"""Spread metrics: ``std``, ``stderr`` and ``bootstrap_stderr`` over sample values.

A headline accuracy means little without its uncertainty; these put an error bar on
it. They use the sample (n - 1) variance, as Inspect AI and the ``statistics`` module
do, and give 0.0 when there are fewer than two samples rather than dividing by zero.
Sums use ``math.fsum`` so a long run of values adds up without drift.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from assay.score._metric import Metric, SampleScore, metric, values_of

# Bootstrap resamples are drawn this many values at a time, so memory stays bounded
# (about 32 MB of indices) however many samples the run has.
_BOOTSTRAP_CHUNK = 4_000_000


def _variance(values: list[float]) -> float:
    """The sample variance (n - 1 denominator); 0.0 below two values."""
    n = len(values)
    if n < 2:
        return 0.0
    centre = math.fsum(values) / n
    return math.fsum((v - centre) ** 2 for v in values) / (n - 1)


@metric
def std() -> Metric:
    """The sample standard deviation of the values: how much samples disagree."""

    def compute(scores: Sequence[SampleScore]) -> float:
        return math.sqrt(_variance(list(values_of(scores))))

    return compute


@metric
def var() -> Metric:
    """The sample variance of the values (Inspect's ``var``): ``std`` squared."""

    def compute(scores: Sequence[SampleScore]) -> float:
        return _variance(list(values_of(scores)))

    return compute


@metric
def stderr() -> Metric:
    """The standard error of the mean, ``sqrt(var / n)``: the error bar on ``mean``."""

    def compute(scores: Sequence[SampleScore]) -> float:
        values = list(values_of(scores))
        return math.sqrt(_variance(values) / len(values)) if values else 0.0

    return compute


@metric
def bootstrap_stderr(num_samples: int = 1000, seed: int = 0) -> Metric:
    """The standard error of the mean estimated by resampling the values.

    Assumes nothing about the values' distribution, which matters for skewed scores
    (a few partial credits among many zeros). *num_samples* means are drawn with
    replacement and their (population) standard deviation is returned. Seeded, so the
    same scores give the same number every time; numpy makes it fast when installed,
    and a pure-Python fallback gives a statistically equivalent (not identical) value.
    """
    if num_samples < 1:
        raise ValueError(f"bootstrap_stderr(num_samples={num_samples}): use at least 1")

    def compute(scores: Sequence[SampleScore]) -> float:
        values = list(values_of(scores))
        if len(values) < 2:
            return 0.0
        try:
            return _bootstrap_numpy(values, num_samples, seed)
        except ImportError:
            return _bootstrap_python(values, num_samples, seed)

    return compute


def _bootstrap_numpy(values: list[float], num_samples: int, seed: int) -> float:
    # numpy is optional (not a dependency): imported here, only when a bootstrap runs.
    import numpy as np  # type: ignore[import-not-found, unused-ignore]

    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    rows = max(1, _BOOTSTRAP_CHUNK // len(values))
    means = []
    for start in range(0, num_samples, rows):
        count = min(rows, num_samples - start)
        picks = rng.integers(0, len(values), size=(count, len(values)))
        means.append(data[picks].mean(axis=1))
    return float(np.concatenate(means).std())


def _bootstrap_python(values: list[float], num_samples: int, seed: int) -> float:
    rng = random.Random(seed)
    n = len(values)
    means = [math.fsum(rng.choices(values, k=n)) / n for _ in range(num_samples)]
    centre = math.fsum(means) / num_samples
    return math.sqrt(math.fsum((m - centre) ** 2 for m in means) / num_samples)
