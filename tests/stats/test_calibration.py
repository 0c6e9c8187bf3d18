"""Calibration by simulation: do the intervals, the gate and McNemar keep their promises?

Seeded and vectorised with numpy (a test-only dependency: skipped when missing). Each
statistic is computed by assay's own code once per distinct count, then looked up for
every simulated run, so 10,000 runs per setting cost milliseconds.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from assay.compare import mcnemar_p
from assay.gate import decide
from assay.score import MetricEstimate, Metrics, TargetCounts
from assay.score._intervals import wilson_interval
from assay.spec import GatePolicy

np = pytest.importorskip("numpy")

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
    rng = _rng(7 + n)
    difficulty = rng.uniform(0.1, 0.9, size=(RUNS, n))  # shared by both targets
    a = rng.random((RUNS, n)) < difficulty
    b = rng.random((RUNS, n)) < difficulty
    a_only = np.sum(a & ~b, axis=1)
    b_only = np.sum(~a & b, axis=1)
    p_of = cache(mcnemar_p)
    p = np.array([p_of(int(x), int(y)) for x, y in zip(a_only, b_only, strict=True)])
    assert float(np.mean(p < 0.05)) <= 0.05
