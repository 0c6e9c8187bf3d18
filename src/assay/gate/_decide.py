"""The gate: apply the spec's policy to the metrics and say passed, failed or inconclusive
(or ``ungated`` when no rule is declared).

Evidence comes before thresholds. A target with any blocked, invalid, unrun or unscorable
trial (or a crashed scorer) is ``inconclusive`` whatever its pass rate, with the reasons
listed: a gate never says ``passed`` about evidence it cannot stand on. Next, with
``min_effect`` declared, a plan too small to detect that effect is ``inconclusive`` (with
the n it would need). Only then is the declared minimum compared with the pass rate over
the planned trials: the point rate by default (the core rule), or, with ``confidence``,
the interval, so that a verdict the evidence cannot support is ``inconclusive``.
With ``no_regression``, each scorer is also compared with the baseline run (see
``_regression``); a target takes the worst of all its verdicts. Each decision keeps the
numbers behind it in ``numbers`` (and ``regression``), per scorer.

A target with no rule declared (no minimum, ``min_effect`` or ``no_regression``) is
``ungated``, never ``passed``: nothing was checked, and a green verdict would say
otherwise. The evidence rule still applies to it: an ungated target with any evidence
problem is ``inconclusive``, and makes the run inconclusive, because a run whose trials
could not be measured says nothing. ``stopped`` is never decided here: it is the status
of a run that stopped on a fatal error before it could be judged (see the pipeline).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from assay.gate._bounds import KORN_GRAUBARD, Bounds, gate_bounds
from assay.gate._multiplicity import adjust_for_multiplicity, minimum_head, minimum_status
from assay.gate._power import independent_samples, samples_needed
from assay.gate._regression import Baseline, Regression, RegressionCheck, check_regression
from assay.score import MetricEstimate, Metrics
from assay.spec import GatePolicy

GateStatus = Literal["passed", "failed", "inconclusive", "ungated", "stopped"]
Number = float | int | str | None

NOT_GATED = "not gated: no minimum, min_effect or no_regression declared"
"""Why a target (or a run) is ``ungated``: the words the CLI and the reports show."""


class TargetDecision(msgspec.Struct, frozen=True):
    """One target's verdict with the numbers and reasons behind it."""

    target_id: str
    status: GateStatus
    gated: bool
    reasons: list[str]
    pass_rates: dict[str, float]
    minimum: float | None
    numbers: dict[str, dict[str, Number]] = {}
    regression: list[RegressionCheck] = []


class GateDecision(msgspec.Struct, frozen=True):
    """The run's verdict: the worst of its gated targets (inconclusive > failed > passed),
    ``inconclusive`` when any target, gated or not, has evidence problems, and
    ``ungated`` when no target is gated.

    ``baseline`` names the run a ``no_regression`` policy compared with (or why none
    could be used); ``None`` without that policy.
    """

    status: GateStatus
    targets: list[TargetDecision]
    reasons: list[str]
    baseline: Baseline | None = None


def decide(
    policy: GatePolicy,
    metrics: Metrics,
    scorer_ids: list[str],
    regression: Regression | None = None,
) -> GateDecision:
    """Apply *policy* to *metrics*; *scorer_ids* are the scorers the spec declares.

    *regression* is the baseline comparison the ``no_regression`` policy needs (see
    ``compare_with_baseline``); without it, a declared ``no_regression`` is inconclusive.
    """
    gated_scorers = [policy.scorer] if policy.scorer else scorer_ids
    if policy.regression is not None and regression is None:
        regression = Regression(Baseline("", problem="no baseline comparison was made"))
    decisions = [
        _decide_target(policy, metrics, counts.target_id, gated_scorers, regression)
        for counts in metrics.targets
    ]
    decisions = adjust_for_multiplicity(policy, decisions)
    status = _run_status(decisions)
    reasons = [f"{d.target_id}: {r}" for d in decisions if _counts(d) for r in d.reasons]
    if status == "ungated":
        reasons = [NOT_GATED]
    baseline = regression.baseline if regression is not None else None
    return GateDecision(status, decisions, reasons, baseline)


def _counts(decision: TargetDecision) -> bool:
    """Whether a target's verdict counts for the run's: a gated one always, an ungated
    one only when its evidence is in doubt (evidence comes first, gated or not)."""
    return decision.gated or decision.status == "inconclusive"


def _run_status(decisions: list[TargetDecision]) -> GateStatus:
    """The worst verdict that counts; ``ungated`` when none does."""
    found = {d.status for d in decisions if _counts(d)}
    return next((s for s in ("inconclusive", "failed", "passed") if s in found), "ungated")


def _decide_target(
    policy: GatePolicy,
    metrics: Metrics,
    target_id: str,
    scorer_ids: list[str],
    regression: Regression | None,
) -> TargetDecision:
    minimum = policy.minimum_for(target_id)
    checks = _regression_checks(policy, regression, target_id, scorer_ids)
    gated = minimum is not None or policy.effect is not None or bool(checks)
    estimates = [metrics.estimate(target_id, s) for s in scorer_ids]
    rates = {e.scorer_id: e.value for e in estimates}
    numbers = {e.scorer_id: _numbers(policy, e, minimum) for e in estimates}

    def verdict(status: GateStatus, reasons: list[str]) -> TargetDecision:
        return TargetDecision(target_id, status, gated, reasons, rates, minimum, numbers, checks)

    problems = _evidence_problems(metrics, target_id, scorer_ids)
    if problems:
        return verdict("inconclusive", problems)
    too_small = _too_small(policy, estimates, numbers)
    if too_small:
        return verdict("inconclusive", too_small)
    outcomes = [_judge(policy, e, minimum) for e in estimates] if minimum is not None else []
    outcomes += [(c.status, c.reason) for c in checks]
    if not outcomes and policy.effect is not None:  # gated by min_effect alone: n suffices
        return verdict("passed", [f"no minimum declared; {_enough(policy)}"])
    if not outcomes:
        return verdict("ungated", [NOT_GATED])
    found = {s for s, _ in outcomes}  # the worst, in the run's order
    status: GateStatus = next(s for s in ("inconclusive", "failed", "passed") if s in found)
    return verdict(status, [reason for _, reason in outcomes])


def _enough(policy: GatePolicy) -> str:
    return (
        f"the plan can detect an effect of {policy.effect:g} with power "
        f"{policy.power_level:g} at confidence {policy.confidence_level:g}"
    )


def _regression_checks(
    policy: GatePolicy, regression: Regression | None, target_id: str, scorer_ids: list[str]
) -> list[RegressionCheck]:
    rule = policy.regression
    if rule is None or regression is None:
        return []
    return [check_regression(regression, target_id, s, rule.margin) for s in scorer_ids]


def _numbers(
    policy: GatePolicy, estimate: MetricEstimate, minimum: float | None
) -> dict[str, Number]:
    level = policy.confidence_level
    bounds = _bounds_of(policy, estimate, minimum)
    numbers: dict[str, Number] = {
        "passed": estimate.passed,
        "denominator": estimate.denominator,
        "rate": estimate.value,
        "ci_low": bounds.low,
        "ci_high": bounds.high,
        "ci_level": level,
        "ci_method": bounds.method,
        "minimum": minimum,
    }
    if bounds.method == KORN_GRAUBARD:
        numbers["n_effective"] = bounds.trials
    if policy.confident and minimum is not None:
        numbers.update(p_pass=bounds.p_pass, p_fail=bounds.p_fail)
    if policy.effect is not None:
        baseline = minimum if minimum is not None else 0.5
        samples = independent_samples(estimate)
        clustered = estimate.denominator > samples
        needed = samples_needed(baseline, policy.effect, policy.power_level, level, clustered)
        numbers.update(
            min_effect=policy.effect,
            power=policy.power_level,
            n_samples=samples,
            n_needed=needed,
        )
    return numbers


def _bounds_of(policy: GatePolicy, estimate: MetricEstimate, minimum: float | None) -> Bounds:
    """The exact bounds (clustered by sample with repetitions) the gate decides with."""
    return gate_bounds(
        estimate.passed,
        estimate.denominator,
        independent_samples(estimate),
        estimate.cluster_stderr,
        policy.confidence_level,
        minimum,
        estimate.informative_samples,
    )


def _too_small(
    policy: GatePolicy,
    estimates: list[MetricEstimate],
    numbers: dict[str, dict[str, Number]],
) -> list[str]:
    if policy.effect is None:
        return []
    reasons = []
    for estimate in estimates:
        needed = numbers[estimate.scorer_id]["n_needed"]
        samples = independent_samples(estimate)
        if not isinstance(needed, int) or samples >= needed:
            continue
        trials = (
            f" ({estimate.denominator} trials: repetitions of a sample are not independent)"
            if estimate.denominator > samples
            else ""
        )
        minimum = numbers[estimate.scorer_id]["minimum"]
        base = minimum if isinstance(minimum, float) else 0.5
        sides = [
            f"{verb} a target at {rate:.4g}"
            for verb, rate in (("pass", base + policy.effect), ("fail", base - policy.effect))
            if 0.0 <= rate <= 1.0
        ]
        reasons.append(
            f"{estimate.scorer_id}: {samples} planned sample(s){trials} cannot detect an "
            f"effect of {policy.effect:g} either way ({' or '.join(sides)} with power "
            f"{policy.power_level:g} at confidence {policy.confidence_level:g}); plan at least "
            f"{needed:g} samples"
        )
    return reasons


def _judge(policy: GatePolicy, estimate: MetricEstimate, minimum: float) -> tuple[GateStatus, str]:
    head = minimum_head(estimate.scorer_id, estimate.passed, estimate.denominator)
    if not policy.confident:
        verdict = "meets" if estimate.value >= minimum else "is below"
        status: GateStatus = "passed" if estimate.value >= minimum else "failed"
        return status, f"{head}{estimate.value:.4g} {verdict} the minimum {minimum:g}"
    level = policy.confidence_level
    bounds = _bounds_of(policy, estimate, minimum)
    kind = "clustered exact" if bounds.method == KORN_GRAUBARD else "exact"
    interval = (
        f"{estimate.value:.4g}, {level:.4g} {kind} interval [{bounds.low:.4g}, {bounds.high:.4g}]"
    )
    status = minimum_status(bounds.p_pass, bounds.p_fail, 1.0 - level)
    if status == "passed":
        return status, f"{head}{interval}: lower bound meets the minimum {minimum:g}"
    if status == "failed":
        return status, f"{head}{interval}: upper bound is below the minimum {minimum:g}"
    return status, f"{head}{interval} contains the minimum {minimum:g}: too uncertain"


def _evidence_problems(metrics: Metrics, target_id: str, scorer_ids: list[str]) -> list[str]:
    states = metrics.counts(target_id).states
    problems = [
        f"{states[state]} trial(s) {state.replace('_', ' ')}"
        for state in ("blocked", "invalid", "not_run")
        if states.get(state)
    ]
    for scorer_id in scorer_ids:
        statuses = metrics.estimate(target_id, scorer_id).statuses
        for status in ("unscorable", "error", "missing"):
            if statuses.get(status):
                label = {"error": "scorer errors", "missing": "unscored"}.get(status, status)
                problems.append(f"{scorer_id}: {statuses[status]} {label}")
    return problems
