"""The gate's exact bounds: the pure-Python beta functions, the boundary error of the
minimum check (exact enumeration), and its interval with repetitions (seeded simulation).

The big grids are in bench/calibration (minimum.py, clustering.py); these are the fast
corners of them.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from bench.calibration._gate import coverage_and_false_pass
from scipy import special, stats  # type: ignore[import-untyped]

from assay.gate import decide
from assay.gate._bounds import betainc, betaincinv, clopper_pearson, t_quantile
from assay.score import MetricEstimate, Metrics, MetricsBuilder, TargetCounts
from assay.spec import GatePolicy

SHAPES = [0.3, 1.0, 2.5, 47.3, 600.0, 4999.5, 1e5]


@pytest.mark.parametrize("a", SHAPES)
def test_betainc_and_its_inverse_agree_with_scipy(a: float) -> None:
    for b in [0.5, 1.0, 3.0, 20.7, 600.0, 1e4]:
        for x in [1e-8, 1e-3, 0.05, 0.5, 0.77, 0.95, 0.999, 1 - 1e-9]:
            assert betainc(a, b, x) == pytest.approx(special.betainc(a, b, x), abs=1e-10)
        for q in [1e-10, 1e-4, 0.025, 0.5, 0.975, 0.9999]:
            expected = special.betaincinv(a, b, q)
            assert betaincinv(a, b, q) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("df", [1.0, 1.5, 4.0, 49.0, 999.0])
def test_t_quantile_agrees_with_scipy(df: float) -> None:
    for probability in [0.9, 0.975, 0.995]:
        assert t_quantile(probability, df) == pytest.approx(stats.t.ppf(probability, df))


def test_clopper_pearson_is_scipys_beta_quantiles() -> None:
    for n in [20, 100, 1000]:
        for k in {0, 1, n // 2, n - 1, n}:
            low, high = clopper_pearson(k, n, 0.95)
            assert low == pytest.approx(0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1))
            expected = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
            assert high == pytest.approx(expected)


def estimate_of(passed: int, n: int) -> Metrics:
    statuses = {"passed": passed, "failed": n - passed, "unscorable": 0, "error": 0, "missing": 0}
    estimate = MetricEstimate("t", "exact", passed / n, passed, n, n, 0.0, statuses, samples=n)
    counts = TargetCounts("t", n, {"completed": n, "blocked": 0, "invalid": 0, "not_run": 0})
    return Metrics([estimate], [counts])


def verdict_odds(minimum: float, rate: float, n: int, confidence: float) -> dict[str, float]:
    """P(each verdict) for a target at *rate*, exactly: the gate judges every count whose
    binomial probability is not negligible, weighted by that probability."""
    policy = GatePolicy(minimum=minimum, confidence=confidence)
    k = np.arange(n + 1)
    weights = stats.binom.pmf(k, n, rate)
    odds = {"passed": 0.0, "failed": 0.0, "inconclusive": 0.0}
    for count in k[weights > 1e-13].tolist():
        status = decide(policy, estimate_of(count, n), ["exact"]).status
        odds[status] += float(weights[count])
    return odds


@pytest.mark.parametrize("minimum", [0.5, 0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [20, 50, 100, 1000])
@pytest.mark.doc(
    "docs/spec.md",
    "4. with `confidence`: the exact (Clopper–Pearson) interval of the pass rate at that "
    "level — `passed` only when its lower bound reaches the minimum, `failed` only when its "
    "upper bound is below it",
)
def test_a_target_at_the_minimum_is_rarely_failed_and_one_below_rarely_passed(
    minimum: float, n: int
) -> None:
    # one-sided error at the boundary ≤ α/2 + 0.005, exactly (Wilson: 8–9% at 0.99)
    bound = 0.025 + 0.005
    assert verdict_odds(minimum, minimum, n, 0.95)["failed"] <= bound
    assert verdict_odds(minimum, minimum - 1e-9, n, 0.95)["passed"] <= bound


@pytest.mark.parametrize("icc", [0.0, 0.1, 0.3, 0.6, 1.0])
@pytest.mark.parametrize("rate", [0.5, 0.9, 0.95])
@pytest.mark.doc(
    "docs/spec.md",
    "With repetitions the interval is clustered by sample (Korn–Graubard's effective n)",
)
def test_the_clustered_interval_covers_and_rarely_passes_at_the_minimum(
    icc: float, rate: float
) -> None:
    # 50 samples × 5 repetitions, each sample's pass probability beta with that ICC
    seed = int(icc * 1000 + rate * 100)
    coverage, false_pass = coverage_and_false_pass(seed, 3000, 50, 5, rate, icc, 0.95)
    assert coverage >= 0.93 and false_pass <= 0.025 + 0.005, (coverage, false_pass)


def repeated(sample_passes: list[bool], repetitions: int) -> Metrics:
    """A deterministic target: every repetition of a sample gives the same result."""
    samples = len(sample_passes)
    builder = MetricsBuilder({"t": samples * repetitions}, ["exact"], repetitions=repetitions)
    for i, ok in enumerate(sample_passes):
        for _ in range(repetitions):
            builder.add_trial("t", "completed")
            builder.add_score("t", "exact", "passed" if ok else "failed", sample_id=f"s{i}")
    return builder.build()


@pytest.mark.doc(
    "docs/spec.md",
    "so 100 samples × 5 repetitions of a deterministic target weigh as 100 samples, not 500;",
    "with repetitions `n_effective`",
)
def test_repetitions_of_a_deterministic_target_weigh_as_its_samples() -> None:
    # the example: 92 of 100 samples pass, 5 repetitions each, minimum 0.88
    policy = GatePolicy(minimum=0.88, confidence=0.95)
    decision = decide(policy, repeated([True] * 92 + [False] * 8, 5), ["exact"])
    assert decision.status == "inconclusive", decision.reasons  # Wilson over 500: passed
    numbers = decision.targets[0].numbers["exact"]
    assert isinstance(numbers["n_effective"], float) and 95 < numbers["n_effective"] <= 100
    assert numbers["ci_method"] == "clopper-pearson (korn-graubard, clustered by sample)"
    assert numbers["ci_low"] == pytest.approx(0.847, abs=0.005)
    # the same counts as 500 independent trials would have passed
    assert decide(policy, estimate_of(460, 500), ["exact"]).status == "passed"


def _imports_after_gating() -> Any:
    code = (
        "import sys\n"
        "from assay.gate import decide\n"
        "from assay.score import MetricsBuilder\n"
        "from assay.spec import GatePolicy\n"
        "builder = MetricsBuilder({'t': 300}, ['exact'], repetitions=3)\n"
        "for i in range(300):\n"
        "    builder.add_trial('t', 'completed')\n"
        "    builder.add_score('t', 'exact', 'passed' if i % 30 else 'failed', f's{i // 3}')\n"
        "policy = GatePolicy(minimum=0.9, confidence=0.95, min_effect=0.05)\n"
        "print(decide(policy, builder.build(), ['exact']).status)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numpy')))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_the_gate_imports_neither_scipy_nor_numpy() -> None:
    # the gate's statistics are pure Python: scipy.special alone costs 0.7 s to import
    assert _imports_after_gating().stdout.split("\n")[:2] == ["inconclusive", "[]"]
