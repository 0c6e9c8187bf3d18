"""The ``no_regression`` policy: is each target at least as good as in a baseline run?

Why paired: the baseline and the new run answered the same samples, so the question is
the difference on those samples, not two independent rates. Pass/fail scores use the
exact McNemar comparison (Agresti–Min interval, discordant counts); continuous scores,
or repeated samples, the paired bootstrap of per-sample differences (sign test). See
``assay.compare``.

Why a margin and an interval: "not worse" cannot be shown exactly, only "not worse by
more than the margin, at this confidence". With d = new − baseline and its interval
[low, high]: ``passed`` when low > −margin (the data rule out a regression bigger than
the margin), ``failed`` when high < −margin (they show one), otherwise ``inconclusive``.
A baseline that is missing, incomplete or does not verify makes the check inconclusive
before any number is looked at.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from assay.compare import MEAN, PairedComparison

Status = Literal["passed", "failed", "inconclusive"]


class Baseline(msgspec.Struct, frozen=True):
    """The baseline run as found: where, which spec, its evidence head, or why unusable."""

    path: str
    spec_digest: str | None = None
    events_head: str | None = None
    problem: str | None = None


class RegressionCheck(msgspec.Struct, frozen=True):
    """One target × scorer against the baseline, with every number behind the verdict.

    ``difference`` is new − baseline (pass rates, or mean scores when ``measure`` is
    ``mean``); ``baseline_only`` / ``new_only`` are the discordant counts (pairs only the
    baseline passed / only the new run passed; for means, samples where that side scored
    higher). ``unpaired_*`` count what only one run has (not compared).
    """

    scorer_id: str
    baseline_target: str
    status: Status
    reason: str
    margin: float
    measure: str = "pass_rate"
    test: str = ""
    pairs: int = 0
    rate_baseline: float = 0.0
    rate_new: float = 0.0
    difference: float = 0.0
    ci_low: float = -1.0
    ci_high: float = 1.0
    ci_level: float = 0.95
    ci_method: str = ""
    p_value: float = 1.0
    p_pass: float = 1.0
    p_fail: float = 1.0
    baseline_only: int = 0
    new_only: int = 0
    unpaired_baseline: int = 0
    unpaired_new: int = 0
    only_in_baseline: list[str] = []
    only_in_new: list[str] = []


class Regression(msgspec.Struct, frozen=True):
    """What the gate needs for ``no_regression``: the baseline and the comparisons with it.

    Each comparison has the baseline's target as ``a`` and the new run's as ``b``.
    """

    baseline: Baseline
    comparisons: list[PairedComparison] = []
    baseline_targets: dict[str, str] = {}


def check_regression(
    regression: Regression, target_id: str, scorer_id: str, margin: float
) -> RegressionCheck:
    """Judge one target × scorer of the new run against the baseline."""
    if regression.baseline.problem is not None:
        reason = f"{scorer_id}: no regression check: {regression.baseline.problem}"
        return RegressionCheck(scorer_id, "", "inconclusive", reason, margin)
    found = [c for c in regression.comparisons if c.b == target_id and c.scorer_id == scorer_id]
    if not found:
        reason = (
            f"{scorer_id}: the baseline has no scores to pair with {target_id!r} "
            "(no common target or scorer)"
        )
        return RegressionCheck(scorer_id, "", "inconclusive", reason, margin)
    # continuous scores and repetitions: the per-sample comparison is the one to believe
    comparison = next((c for c in found if c.measure == MEAN), found[0])
    status, verdict = judge_regression(comparison, margin)
    return _check(comparison, regression, target_id, status, verdict, margin)


def judge_regression(comparison: PairedComparison, margin: float) -> tuple[Status, str]:
    """The verdict on *comparison* (baseline as A, new as B) at *margin*."""
    if comparison.pairs == 0:
        return "inconclusive", "no sample in common with the baseline"
    if comparison.ci_low > -margin:
        return "passed", f"lower bound above -{margin:g}: no regression"
    if comparison.ci_high < -margin:
        return "failed", f"upper bound below -{margin:g}: a regression"
    return "inconclusive", f"interval contains -{margin:g}: too uncertain"


def _check(
    c: PairedComparison,
    regression: Regression,
    target_id: str,
    status: Status,
    verdict: str,
    margin: float,
) -> RegressionCheck:
    what = "mean score" if c.measure == MEAN else "pass rate"
    unit = "paired sample(s)" if c.measure == MEAN else "pair(s)"
    unpaired = ""
    if c.unpaired_a or c.unpaired_b:
        unpaired = f"; not paired: {c.unpaired_a} only in the baseline, {c.unpaired_b} only here"
    reason = (
        f"{c.scorer_id}: {what} {c.rate_b:.4g} vs baseline {c.rate_a:.4g} over {c.pairs} "
        f"{unit}, difference {c.difference:+.4g}, {c.ci_level:.4g} interval "
        f"[{c.ci_low:+.4g}, {c.ci_high:+.4g}], p = {c.p_value:.3g} ({c.test}; "
        f"{c.a_only} baseline-only, {c.b_only} new-only){unpaired}: {verdict}"
    )
    return RegressionCheck(
        scorer_id=c.scorer_id,
        baseline_target=regression.baseline_targets.get(target_id, ""),
        status=status,
        reason=reason,
        margin=margin,
        measure=c.measure,
        test=c.test,
        pairs=c.pairs,
        rate_baseline=c.rate_a,
        rate_new=c.rate_b,
        difference=c.difference,
        ci_low=c.ci_low,
        ci_high=c.ci_high,
        ci_level=c.ci_level,
        ci_method=c.ci_method,
        p_value=c.p_value,
        baseline_only=c.a_only,
        new_only=c.b_only,
        unpaired_baseline=c.unpaired_a,
        unpaired_new=c.unpaired_b,
        only_in_baseline=c.only_in_a,
        only_in_new=c.only_in_b,
    )
