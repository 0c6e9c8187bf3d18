"""Calibration of no_regression and of ``assay compare`` with repetitions (issue 13).

The no_regression gate on pass/fail pairs is checked *exactly*: its verdict depends on
the paired table only through (baseline-only, new-only) among n pairs, and for a fixed
number D of discordant pairs it passes exactly when the baseline-only count is at most
some c*(D) (checked below by a full scan). So the chance of passing a new run worse by
exactly the margin is Σ_D P(D discordant) · P(baseline-only ≤ c*(D) | D), two binomials,
for any discordance pattern: no simulation error. Repetitions and ``assay compare`` are
simulated (seeded, vectorised with numpy), with each statistic computed by assay's own
code.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from assay.compare import margin_p_values, mcnemar_p, paired_interval, summarize
from assay.compare._pairs import clustered_mcnemar_p
from assay.gate import judge_regression

ALPHA = 0.05
BOUND = ALPHA / 2 + 0.005  # the promise for a two-sided 95% interval
TEMPLATE = summarize(("baseline", "new"), "s", (0, 0, 0, 0, 1), [], 0, 0.95)


def gate_passes(a_only: float, b_only: float, n: int, margin: float) -> bool:
    """The real gate's verdict on a paired table (baseline as A, new as B)."""
    low, high = paired_interval(a_only, b_only, n, 1 - ALPHA)
    comparison = msgspec.structs.replace(TEMPLATE, pairs=n, ci_low=low, ci_high=high)
    return judge_regression(comparison, margin)[0] == "passed"


@cache
def most_baseline_only(n: int, margin: float) -> tuple[int, ...]:
    """c*(D) for D = 0..n: the most baseline-only pairs among D discordant that still pass
    (−1 when none does), by binary search on the gate's own verdict."""
    found = []
    for discordant in range(n + 1):
        low, high = -1, discordant  # passes at low (or low is -1), fails above high
        while low < high:
            middle = (low + high + 1) // 2
            if gate_passes(middle, discordant - middle, n, margin):
                low = middle
            else:
                high = middle - 1
        found.append(low)
    return tuple(found)


def false_pass(n: int, margin: float, new_only: float) -> float:
    """P(passed) when P(new only) = *new_only* and P(baseline only) = new_only + margin:
    the new run is worse by exactly the margin."""
    baseline_only = new_only + margin
    discordant = np.arange(n + 1)
    weight = stats.binom.pmf(discordant, n, new_only + baseline_only)
    threshold = np.array(most_baseline_only(n, margin))
    share = baseline_only / (new_only + baseline_only)
    passing = np.where(threshold >= 0, stats.binom.cdf(threshold, discordant, share), 0.0)
    return float(np.sum(weight * passing))


PATTERNS = [0.0, 0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45]  # P(new only)


@pytest.mark.parametrize(("n", "margin"), [(50, 0.05), (100, 0.02), (200, 0.01), (200, 0.05)])
@pytest.mark.doc(
    "docs/spec.md",
    "The interval is two-sided at `confidence`, so a target worse by exactly the margin "
    "passes at most (1 − confidence)/2 of the time; the calibration tests check at most "
    "(1 − confidence)/2 + 0.005 by exact enumeration, at n from 50 to 1,000 and margins "
    "from 0.01 to 0.05, whatever the discordant pairs (a new run that only breaks samples "
    "included).",
)
def test_no_regression_worst_case_false_pass_at_the_margin(n: int, margin: float) -> None:
    worst = {p: false_pass(n, margin, p) for p in PATTERNS}
    assert max(worst.values()) <= BOUND, worst
    # the new run only breaks samples (no new-only pair): the case Agresti–Min got wrong
    assert worst[0.0] <= BOUND


def test_the_passing_tables_are_those_below_a_threshold() -> None:
    """The exact sum above assumes passing is monotone in baseline-only pairs at fixed D."""
    n, margin = 60, 0.1
    threshold = most_baseline_only(n, margin)
    for discordant in range(n + 1):
        verdicts = [gate_passes(c, discordant - c, n, margin) for c in range(discordant + 1)]
        assert verdicts == [c <= threshold[discordant] for c in range(discordant + 1)]


@pytest.mark.parametrize("margin", [0.01, 0.02, 0.05])
def test_identical_runs_too_small_to_pass_are_not_passed(margin: float) -> None:
    # 100 identical pairs "proved" a 0.02 margin with Agresti–Min (±0.0192)
    n = {0.01: 380, 0.02: 188, 0.05: 72}[margin]
    assert not gate_passes(0, 0, n, margin) and gate_passes(0, 0, n + 1, margin)


# --- repetitions: per-sample mean differences as fractional discordant pairs ----------

REP_RUNS = 2000


def _difficulty(rng: Any, mean: float, icc: float, shape: tuple[int, int]) -> Any:
    """Per-sample pass probabilities with mean *mean* whose repetitions correlate at *icc*
    (Beta with that intra-class correlation; 0/1 per sample at icc = 1)."""
    if icc >= 1.0:
        return (rng.random(shape) < mean).astype(float)
    scale = (1 - icc) / icc
    return rng.beta(mean * scale, (1 - mean) * scale, size=shape)


def _rep_false_pass(rng: Any, n: int, icc: float, how: str, margin: float = 0.05) -> float:
    reps, mean = 5, 0.8
    base = _difficulty(rng, mean, icc, (REP_RUNS, n))
    if how == "breaks":  # the new build loses some samples outright, shares the rest
        new = base * (rng.random(base.shape) >= margin / mean)
    else:  # another model: its own difficulty per sample, worse by the margin on average
        new = _difficulty(rng, mean - margin, icc, (REP_RUNS, n))
    diff = (rng.binomial(reps, new) - rng.binomial(reps, base)) / reps
    a_mass = np.where(diff < 0, -diff, 0.0).sum(axis=1)
    b_mass = np.where(diff > 0, diff, 0.0).sum(axis=1)
    masses = zip(a_mass.tolist(), b_mass.tolist(), strict=True)
    passes = [margin_p_values(a, b, n, margin)[0] < ALPHA / 2 for a, b in masses]
    return float(np.mean(passes))


@pytest.mark.parametrize("icc", [0.2, 0.5, 1.0])
def test_repetitions_rarely_pass_a_target_worse_by_the_margin(icc: float) -> None:
    rng = np.random.default_rng(int(icc * 100))
    for how in ("breaks", "independent"):
        rate = _rep_false_pass(rng, 100, icc, how)
        assert rate <= BOUND + 0.005, (how, rate)  # 2,000 runs: ±0.0035 at 0.025


@pytest.mark.doc(
    "docs/spec.md",
    "This interval never has zero width, even when every difference is 0.",
    "Below it, a check the interval does not already decide is `inconclusive` and its "
    "reason says how many samples are needed (`n_needed` in the decision).",
)
def test_identical_runs_with_repetitions_do_not_collapse_the_interval() -> None:
    from assay.compare import compare_runs

    def run() -> list[dict[str, Any]]:  # 30 samples x 3 repetitions, the same every time
        return [{"target_id": "t", "sample_id": f"s{i:02}", "repetition": rep,
                 "scorer_id": "exact", "status": "passed" if i % 4 else "failed"}
                for i in range(30) for rep in (1, 2, 3)]  # fmt: skip

    mean, _ = compare_runs(run(), run(), [("t", "t")], repetitions=(3, 3))
    assert mean.measure == "mean" and mean.difference == 0
    assert mean.ci_low < -0.1 and mean.ci_high > 0.1  # the bootstrap said [0, 0]
    status, reason = judge_regression(mean, 0.05)
    assert status == "inconclusive" and "at least 73 are needed" in reason


# --- assay compare with repetitions: the clustered test leads -------------------------

COMPARE_RUNS = 3000


def _identical_targets(rng: Any, n: int, icc: float) -> tuple[Any, Any]:
    """Two equally good targets, each with its own per-sample difficulty, 5 repetitions:
    the number of repetitions each passed, per sample."""
    a = rng.binomial(5, _difficulty(rng, 0.7, icc, (COMPARE_RUNS, n)))
    b = rng.binomial(5, _difficulty(rng, 0.7, icc, (COMPARE_RUNS, n)))
    return a, b


@pytest.mark.parametrize("icc", [0.2, 0.5])
@pytest.mark.doc(
    "docs/cli.md",
    "With repetitions in either run it prints the comparison of per-sample means first",
)
def test_the_clustered_tests_keep_their_level_with_repetitions(icc: float) -> None:
    a, b = _identical_targets(np.random.default_rng(70 + int(icc * 10)), 50, icc)
    net = b - a
    sign_p = cache(mcnemar_p)
    counts = zip((net < 0).sum(1).tolist(), (net > 0).sum(1).tolist(), strict=True)
    sign = [sign_p(x, y) for x, y in counts]
    clustered = [clustered_mcnemar_p([int(v) for v in row]) for row in net]
    assert float(np.mean(np.array(sign) < ALPHA)) <= ALPHA + 0.01
    assert float(np.mean(np.array(clustered) < ALPHA)) <= ALPHA + 0.01
