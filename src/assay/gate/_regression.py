"""The ``no_regression`` policy: is each target at least as good as in a baseline run?

Why paired: the baseline and the new run answered the same samples, so the question is
the difference on those samples, not two independent rates. Pass/fail scores use the
discordant counts (Tango's score interval, exact McNemar p-value); continuous scores, or
repeated samples, the per-sample mean differences as fractional discordant masses (the
same score interval, sign test). See ``assay.compare``.

Why a margin and an interval: "not worse" cannot be shown exactly, only "not worse by
more than the margin, at this confidence". With d = new − baseline and its interval
[low, high]: ``passed`` when low > −margin (the data rule out a regression bigger than
the margin), ``failed`` when high < −margin (they show one), otherwise ``inconclusive``
— and then, with fewer pairs than identical runs would need to pass, the reason names
that n. ``p_pass`` / ``p_fail`` are the one-sided p-values at −margin of the same score
statistic (for multiplicity control over the gate's checks).

Evidence first: a baseline that is missing, incomplete or does not verify, or whose
samples differ from the new run's, makes the check inconclusive before any number is
looked at; so do more unpaired samples (absent from one run, or not measured in
either) than the policy's ``max_unpaired``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from assay.compare import MEAN, PairedComparison, margin_p_values, pairs_needed

Status = Literal["passed", "failed", "inconclusive"]
NAMED = 20  # unpaired samples named in a reason; the decision's lists hold up to 50


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
    higher). ``unpaired_*`` count what was not compared (absent from the other run, or
    not measured in either). ``p_pass`` is the one-sided p-value of H0 "d ≤ −margin"
    (small: evidence of no regression), ``p_fail`` of H0 "d ≥ −margin" (small: evidence
    of one), both 1.0 when the evidence rule (no usable baseline, too many unpaired
    samples) makes the check inconclusive whatever the numbers; ``n_needed`` the fewest
    pairs with which identical runs would pass.
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
    baseline_only: int = 0
    new_only: int = 0
    unpaired_baseline: int = 0
    unpaired_new: int = 0
    only_in_baseline: list[str] = []
    only_in_new: list[str] = []
    p_pass: float = 1.0
    p_fail: float = 1.0
    n_needed: int | None = None
    unpaired_samples: int = 0


class Regression(msgspec.Struct, frozen=True):
    """What the gate needs for ``no_regression``: the baseline and the comparisons with it.

    Each comparison has the baseline's target as ``a`` and the new run's as ``b``;
    ``max_unpaired`` is the policy's tolerance of unpaired samples.
    """

    baseline: Baseline
    comparisons: list[PairedComparison] = []
    baseline_targets: dict[str, str] = {}
    max_unpaired: int = 0


def check_regression(
    regression: Regression, target_id: str, scorer_id: str, margin: float
) -> RegressionCheck:
    """Judge one target × scorer of the new run against the baseline.

    More than the policy's ``max_unpaired`` samples left unpaired make it
    ``inconclusive``: a sample the baseline could not measure is not a baseline failure
    the new run may match.
    """
    max_unpaired = regression.max_unpaired
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
    if comparison.unpaired_samples > max_unpaired:  # evidence first: no p-value stands
        verdict = _too_many_unpaired(comparison, max_unpaired)
        check = _check(comparison, regression, target_id, "inconclusive", verdict, margin)
        return msgspec.structs.replace(check, p_pass=1.0, p_fail=1.0)
    return _check(comparison, regression, target_id, status, verdict, margin)


def judge_regression(comparison: PairedComparison, margin: float) -> tuple[Status, str]:
    """The verdict on *comparison* (baseline as A, new as B) at *margin*."""
    if comparison.pairs == 0:
        return "inconclusive", "no sample in common with the baseline"
    if comparison.ci_low > -margin:
        return "passed", f"lower bound above -{margin:g}: no regression"
    if comparison.ci_high < -margin:
        return "failed", f"upper bound below -{margin:g}: a regression"
    needed = pairs_needed(margin, comparison.ci_level)
    if needed is None:
        return "inconclusive", "a margin of 0 can never be shown: no sample size passes it"
    if comparison.pairs < needed:
        return "inconclusive", (
            f"interval contains -{margin:g}: {comparison.pairs} paired sample(s) cannot "
            f"show a margin of {margin:g} at {comparison.ci_level:g} even with no "
            f"difference; at least {needed} are needed"
        )
    return "inconclusive", f"interval contains -{margin:g}: too uncertain"


def _too_many_unpaired(c: PairedComparison, max_unpaired: int) -> str:
    named = sorted(set(c.only_in_a) | set(c.only_in_b))[:NAMED]
    more = c.unpaired_samples - len(named)
    listed = ", ".join(named) + (f" and {more} more" if more > 0 else "")
    return (
        f"{c.unpaired_samples} sample(s) not paired with the baseline (absent from one run, "
        f"or blocked, invalid, unscorable or errored in either), more than max_unpaired "
        f"{max_unpaired}: {listed}"
    )


def _check(
    c: PairedComparison,
    regression: Regression,
    target_id: str,
    status: Status,
    verdict: str,
    margin: float,
) -> RegressionCheck:
    p_pass, p_fail = margin_p_values(c.a_mass, c.b_mass, c.pairs, margin)
    what = "mean score" if c.measure == MEAN else "pass rate"
    unit = "paired sample(s)" if c.measure == MEAN else "pair(s)"
    unpaired = ""
    if c.unpaired_a or c.unpaired_b:
        unpaired = f"; not paired: {c.unpaired_a} of the baseline's, {c.unpaired_b} of this run's"
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
        p_pass=p_pass,
        p_fail=p_fail,
        n_needed=pairs_needed(margin, c.ci_level),
        unpaired_samples=c.unpaired_samples,
    )
