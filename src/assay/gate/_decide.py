"""The gate: apply the spec's policy to the metrics and say passed, failed or inconclusive.

Evidence comes before thresholds. A target with any blocked, invalid, unrun or unscorable
trial (or a crashed scorer) is ``inconclusive`` whatever its pass rate, with the reasons
listed: a gate never says ``passed`` about evidence it cannot stand on. Only then is the
declared minimum compared with the pass rate over the planned trials.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from assay.score import Metrics
from assay.spec import GatePolicy

GateStatus = Literal["passed", "failed", "inconclusive"]


class TargetDecision(msgspec.Struct, frozen=True):
    """One target's verdict with the numbers and reasons behind it."""

    target_id: str
    status: GateStatus
    gated: bool
    reasons: list[str]
    pass_rates: dict[str, float]
    minimum: float | None


class GateDecision(msgspec.Struct, frozen=True):
    """The run's verdict: the worst of its targets (inconclusive > failed > passed)."""

    status: GateStatus
    targets: list[TargetDecision]
    reasons: list[str]


def decide(policy: GatePolicy, metrics: Metrics, scorer_ids: list[str]) -> GateDecision:
    """Apply *policy* to *metrics*; *scorer_ids* are the scorers the spec declares."""
    gated_scorers = [policy.scorer] if policy.scorer else scorer_ids
    decisions = [
        _decide_target(policy, metrics, counts.target_id, gated_scorers)
        for counts in metrics.targets
    ]
    statuses = {d.status for d in decisions if d.gated}
    status: GateStatus = (
        "inconclusive"
        if "inconclusive" in statuses
        else "failed"
        if "failed" in statuses
        else "passed"
    )
    reasons = [f"{d.target_id}: {r}" for d in decisions if d.gated for r in d.reasons]
    return GateDecision(status, decisions, reasons)


def _decide_target(
    policy: GatePolicy, metrics: Metrics, target_id: str, scorer_ids: list[str]
) -> TargetDecision:
    minimum = policy.minimum_for(target_id)
    rates = {s: metrics.estimate(target_id, s).value for s in scorer_ids}
    problems = _evidence_problems(metrics, target_id, scorer_ids)
    if problems:
        return TargetDecision(
            target_id, "inconclusive", minimum is not None, problems, rates, minimum
        )
    if minimum is None:
        return TargetDecision(target_id, "passed", False, ["no minimum declared"], rates, None)
    reasons = []
    status: GateStatus = "passed"
    for scorer_id in scorer_ids:
        estimate = metrics.estimate(target_id, scorer_id)
        verdict = "meets" if estimate.value >= minimum else "is below"
        reasons.append(
            f"{scorer_id}: pass rate {estimate.passed}/{estimate.denominator} = "
            f"{estimate.value:.4g} {verdict} the minimum {minimum:g}"
        )
        if estimate.value < minimum:
            status = "failed"
    return TargetDecision(target_id, status, True, reasons, rates, minimum)


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
