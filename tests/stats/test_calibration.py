"""Calibration by simulation: do the intervals, the gates and the tests keep their promises?

Seeded and vectorised with numpy; distributions are scipy's. Each statistic is computed
by assay's own code once per distinct count, then looked up for every simulated run, so
10,000 runs per setting cost milliseconds. The bootstrap cannot be looked up: it runs on
all simulated runs at once (one 2-D call), with fewer runs (600 at n = 100, 150 at
n = 1,000), hence the wider tolerances there; the sign test uses 1,000 runs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from assay.compare import mcnemar_p, paired_interval, summarize
from assay.gate import decide, judge_regression
from assay.score import MetricEstimate, Metrics, TargetCounts, bootstrap_means
from assay.score._intervals import wilson_interval
from assay.spec import GatePolicy

RUNS = 10_000
SIZES = [100, 1000]
RATES = [round(0.1 + 0.05 * i, 2) for i in range(17)]  # 0.1 .. 0.9


def _rng(seed: int) -> Any:
    return np.random.default_rng(seed)


@cache
def _wilson_table(n: int) -> tuple[Any, Any]:
    bounds = [wilson_interval(k, n, 0.95) for k in range(n + 1)]
    return np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])


def _coverage(rate: float, n: int, seed: int) -> float:
    low, high = _wilson_table(n)
    k = _rng(seed).binomial(n, rate, size=RUNS)
    return float(np.mean((low[k] <= rate) & (rate <= high[k])))


@pytest.mark.parametrize("n", SIZES)
def test_wilson_95_covers_the_true_rate(n: int) -> None:
    coverage = [_coverage(rate, n, seed=1000 * n + i) for i, rate in enumerate(RATES)]
    assert 0.94 <= float(np.mean(coverage)) <= 0.965, coverage
    assert min(coverage) >= 0.92, dict(zip(RATES, coverage, strict=True))


def _gate_status(policy: GatePolicy, passed: int, n: int) -> str:
    low, high = wilson_interval(passed, n, policy.confidence_level)
    statuses = {"passed": passed, "failed": n - passed, "unscorable": 0, "error": 0, "missing": 0}
    estimate = MetricEstimate("t", "exact", passed / n, passed, n, n, 0.0, statuses, low, high)
    counts = TargetCounts("t", n, {"completed": n, "blocked": 0, "invalid": 0, "not_run": 0})
    return decide(policy, Metrics([estimate], [counts]), ["exact"]).status


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("minimum", "rate"), [(0.9, 0.899), (0.9, 0.88), (0.8, 0.79), (0.5, 0.49)])
@pytest.mark.doc(
    "docs/spec.md",
    "4. with `confidence`: the exact (Clopper–Pearson) interval of the pass rate at that level",
)
def test_confident_gate_rarely_passes_a_target_below_the_threshold(
    n: int, minimum: float, rate: float
) -> None:
    policy = GatePolicy(minimum=minimum, confidence=0.95)
    k = _rng(int(rate * 1000) + n).binomial(n, rate, size=RUNS)
    passes = {int(v): _gate_status(policy, int(v), n) == "passed" for v in np.unique(k)}
    false_pass = float(np.mean([passes[int(v)] for v in k]))
    assert false_pass <= 0.05, false_pass


@pytest.mark.parametrize("n", SIZES)
def test_mcnemar_false_positive_rate_for_equal_targets(n: int) -> None:
    # Two equal targets share each sample's difficulty d ~ U(0.1, 0.9): a pair is
    # discordant either way with probability E[d(1 - d)]. Samples are independent, so a
    # run's (A only, B only, concordant) counts are multinomial with those probabilities.
    discordant = float(stats.uniform(0.1, 0.8).expect(lambda d: d * (1 - d)))
    cells = [discordant, discordant, 1 - 2 * discordant]
    table = stats.multinomial(n, cells).rvs(size=RUNS, random_state=_rng(7 + n))
    p_of = cache(lambda low, high: mcnemar_p(low, high))  # symmetric: one call per split
    p = np.array([p_of(min(a, b), max(a, b)) for a, b, _ in table.tolist()])
    assert float(np.mean(p < 0.05)) <= 0.05


# --- continuous scores: bootstrap means, the paired test, no_regression ----------------

MEAN_RUNS = {100: 600, 1000: 150}  # each run is a 1,000-resample bootstrap
DISTRIBUTIONS = {
    "beta(2, 5)": stats.beta(2, 5),  # partial credit, skewed towards 0
    "beta(0.5, 0.5)": stats.beta(0.5, 0.5),  # mostly near 0 or 1
}


def _zero_inflated(rng: Any, shape: tuple[int, int]) -> Any:
    """Scores that are 0 for 60% of samples and uniform partial credit otherwise (mean 0.2)."""
    zeros = stats.bernoulli(0.6).rvs(size=shape, random_state=rng).astype(bool)
    return np.where(zeros, 0.0, stats.uniform(0, 1).rvs(size=shape, random_state=rng))


@pytest.mark.parametrize("n", SIZES)
def test_bootstrap_mean_intervals_cover_the_true_mean(n: int) -> None:
    runs = MEAN_RUNS[n]
    coverage = {}
    for i, (name, dist) in enumerate(DISTRIBUTIONS.items()):
        data = dist.rvs(size=(runs, n), random_state=_rng(50 + i + n))
        low, high, _ = bootstrap_means(data, 0.95, seed=i)
        coverage[name] = float(np.mean((low <= dist.mean()) & (dist.mean() <= high)))
    data = _zero_inflated(_rng(90 + n), (runs, n))
    low, high, _ = bootstrap_means(data, 0.95, seed=9)
    coverage["zero-inflated"] = float(np.mean((low <= 0.2) & (high >= 0.2)))
    assert 0.93 <= float(np.mean(list(coverage.values()))) <= 0.965, coverage
    assert min(coverage.values()) >= 0.91, coverage


SIGN_RUNS = 1000


def _paired_scores(rng: Any, runs: int, n: int, shift: float) -> tuple[Any, Any]:
    """Baseline and new scores sharing each sample's difficulty; new = baseline + shift."""
    difficulty = stats.beta(2, 2).rvs(size=(runs, n), random_state=rng)
    noise = stats.norm(0, 0.15)
    baseline = difficulty + noise.rvs(size=(runs, n), random_state=rng)
    new = difficulty + shift + noise.rvs(size=(runs, n), random_state=rng)
    return np.round(baseline, 1), np.round(new, 1)  # partial credit in tenths: ties happen


@pytest.mark.parametrize("n", SIZES)
def test_sign_test_false_positive_rate_for_equal_continuous_targets(n: int) -> None:
    a, b = _paired_scores(_rng(300 + n), SIGN_RUNS, n, 0.0)
    a_higher, b_higher = np.sum(a > b, axis=1), np.sum(b > a, axis=1)
    p_of = cache(mcnemar_p)  # the sign test is the same exact binomial
    p = np.array([p_of(int(x), int(y)) for x, y in zip(a_higher, b_higher, strict=True)])
    assert float(np.mean(p < 0.05)) <= 0.05


def _gate_passes(low: Any, high: Any, margin: float) -> Any:
    """The gate's verdict on each simulated run's interval."""
    template = summarize(("baseline", "new"), "s", (0, 0, 0, 0, 1), [], 0, 0.95)
    intervals = zip(low.tolist(), high.tolist(), strict=True)
    return np.array([
        judge_regression(msgspec.structs.replace(template, ci_low=lo, ci_high=hi), margin)[0]
        == "passed"
        for lo, hi in intervals
    ])  # fmt: skip


def _score_interval_of_differences(diffs: Any) -> tuple[Any, Any]:
    """The no_regression interval of each simulated run's per-sample differences: the
    score interval over fractional discordant masses (what ``MeanTally`` computes)."""
    a_mass = np.where(diffs < 0, -diffs, 0.0).sum(axis=1).tolist()
    b_mass = np.where(diffs > 0, diffs, 0.0).sum(axis=1).tolist()
    n = diffs.shape[1]
    bounds = [paired_interval(a, b, n, 0.95) for a, b in zip(a_mass, b_mass, strict=True)]
    return np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.doc(
    "docs/spec.md",
    "a target worse by exactly the margin passes at most (1 − confidence)/2 of the time",
)
def test_no_regression_rarely_passes_a_continuous_target_worse_by_the_margin(n: int) -> None:
    margin, runs = 0.05, 2000
    rng = _rng(500 + n)
    mean = 2 / 7  # of beta(2, 5): partial credit, skewed towards 0
    baseline = stats.beta(2, 5).rvs(size=(runs, n), random_state=rng)
    # worse by exactly the margin: the hardest case a gate must not pass. The new build
    # keeps a random share of each sample's credit (mean 1 − margin/mean), or is another
    # model whose credit is independent of the baseline's with mean `mean − margin`.
    keep = 1 - margin / mean
    shrunk = baseline * stats.uniform(2 * keep - 1, 2 - 2 * keep).rvs(
        size=(runs, n), random_state=rng
    )
    other = stats.beta(2, 2 * (1 - mean + margin) / (mean - margin)).rvs(
        size=(runs, n), random_state=rng
    )
    for new in (shrunk, other):
        low, high = _score_interval_of_differences(new - baseline)
        false_pass = float(np.mean(_gate_passes(low, high, margin)))
        assert false_pass <= 0.025 + 0.005, false_pass


def _regression_status(a_only: int, b_only: int, n: int, margin: float) -> str:
    """The gate's verdict from a paired table: it depends only on the score interval of
    the discordant counts (the p-value is reported, not judged, so it is skipped here)."""
    low, high = paired_interval(a_only, b_only, n, 0.95)
    template = summarize(("baseline", "new"), "s", (0, 0, 0, 0, n), [], 0, 0.95)
    comparison = msgspec.structs.replace(template, ci_low=low, ci_high=high)
    return judge_regression(comparison, margin)[0]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("rate", "margin"), [(0.9, 0.02), (0.9, 0.05), (0.7, 0.05)])
@pytest.mark.doc(
    "docs/spec.md",
    "The interval is two-sided at `confidence`, so a target worse by exactly the margin "
    "passes at most (1 − confidence)/2 of the time",
)
def test_no_regression_rarely_passes_a_target_worse_by_the_margin(
    n: int, rate: float, margin: float
) -> None:
    worse = rate - margin  # worse by exactly the margin: anything worse passes less often
    # Per sample, the new run keeps the baseline's difficulty half the time (both pass
    # below `worse`, only the baseline between `worse` and `rate`) and is independent
    # otherwise. Samples are independent, so the paired table of a run is multinomial.
    a_only = 0.5 * (rate - worse) + 0.5 * rate * (1 - worse)
    b_only = 0.5 * (1 - rate) * worse
    cells = [a_only, b_only, 1 - a_only - b_only]
    table = stats.multinomial(n, cells).rvs(size=RUNS, random_state=_rng(int(rate * 1e4) + n))
    status = cache(_regression_status)
    passes = [status(int(x), int(y), n, margin) == "passed" for x, y, _ in table]
    assert float(np.mean(passes)) <= 0.05
