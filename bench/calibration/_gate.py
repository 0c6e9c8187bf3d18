"""Simulations of the gate's minimum check, shared by bench/calibration and tests/stats.

Each simulated run is reduced to the statistics the gate reads (passes, and with
repetitions the sum of squared per-sample pass counts and the samples holding the rarer
outcome); assay's own code then judges
each distinct statistic once, and the verdicts are looked up for every run. So 10,000
runs cost what a few hundred distinct outcomes cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from assay.gate._bounds import effective_counts, one_sided_p
from assay.score._intervals import cluster_stderr


def sample_rates(rng: Any, runs: int, samples: int, rate: float, icc: float) -> Any:
    """Each sample's own pass probability: beta-distributed with mean *rate* and
    intra-sample correlation *icc* (0: all equal to *rate*; 1: each sample always passes
    or always fails)."""
    if icc <= 0.0:
        return np.full((runs, samples), rate)
    if icc >= 1.0:
        return (rng.random((runs, samples)) < rate).astype(float)
    spread = 1.0 / icc - 1.0
    return rng.beta(rate * spread, (1.0 - rate) * spread, size=(runs, samples))


def clustered_runs(
    rng: Any, runs: int, samples: int, repetitions: int, rate: float, icc: float
) -> Any:
    """Per run: passes, the sum of squared per-sample pass counts, and the samples
    holding the rarer outcome (what MetricsBuilder keeps), as three columns."""
    counts = rng.binomial(repetitions, sample_rates(rng, runs, samples, rate, icc))
    informative = np.minimum((counts > 0).sum(axis=1), (counts < repetitions).sum(axis=1))
    return np.stack([counts.sum(axis=1), (counts * counts).sum(axis=1), informative], axis=1)


def clustered_p_values(
    runs: Any, samples: int, repetitions: int, level: float, minimum: float
) -> tuple[Any, Any]:
    """The gate's (p_pass, p_fail) at *minimum* for each run, as assay computes them."""
    trials = samples * repetitions
    unique, inverse = np.unique(runs, axis=0, return_inverse=True)
    found = np.empty((len(unique), 2))
    for row, (total, square, informative) in enumerate(unique.tolist()):
        stderr = cluster_stderr(total / repetitions, square / repetitions**2, samples)
        x, n, _ = effective_counts(int(total), trials, samples, stderr, level, informative)
        found[row] = one_sided_p(x, n, minimum)
    picked = found[np.asarray(inverse).reshape(-1)]
    return picked[:, 0], picked[:, 1]


def coverage_and_false_pass(
    seed: int, runs: int, samples: int, repetitions: int, rate: float, icc: float, level: float
) -> tuple[float, float]:
    """Coverage of the gate's interval of a target at *rate*, and how often a minimum of
    exactly *rate* is ``passed`` (the lower bound reaches it though the rate is only equal)."""
    rng = np.random.default_rng(seed)
    simulated = clustered_runs(rng, runs, samples, repetitions, rate, icc)
    p_pass, p_fail = clustered_p_values(simulated, samples, repetitions, level, rate)
    alpha = 1.0 - level
    passed = p_pass <= alpha / 2.0
    failed = p_fail < alpha / 2.0
    return float(np.mean(~passed & ~failed)), float(np.mean(passed))


def verdict_odds(minimum: float, rate: float, n: int, level: float) -> dict[str, float]:
    """P(each verdict) of the confident minimum check for a target at *rate*, exactly: the
    gate (``decide``) judges every count whose binomial probability is not negligible."""
    from assay.gate import decide
    from assay.score import MetricEstimate, Metrics, TargetCounts
    from assay.spec import GatePolicy
    from scipy import stats  # type: ignore[import-untyped]

    policy = GatePolicy(minimum=minimum, confidence=level)
    counts = TargetCounts("t", n, {"completed": n, "blocked": 0, "invalid": 0, "not_run": 0})
    k = np.arange(n + 1)
    weights = stats.binom.pmf(k, n, rate)
    odds = {"passed": 0.0, "failed": 0.0, "inconclusive": 0.0}
    for count in k[weights > 1e-13].tolist():
        statuses = {"passed": count, "failed": n - count, "unscorable": 0, "error": 0}
        estimate = MetricEstimate("t", "s", count / n, count, n, n, 0.0, statuses, samples=n)
        status = decide(policy, Metrics([estimate], [counts]), ["s"]).status
        odds[status] += float(weights[count])
    return odds
