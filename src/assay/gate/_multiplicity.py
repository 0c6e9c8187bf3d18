"""Many checks, one promise: Holm's step-down over every gated check of a run.

Why: each interval-based check errs at most α (α/2 each way), but a run with 10 targets
× 3 scorers makes 30 of them; with all targets exactly at their minimum, some good check
failed 61% of the time. Holm's procedure keeps the chance of *any* wrong verdict among
all the checks at most α, whatever their dependence, and never decides less than
Bonferroni would.

The family is every check that reached a statistical test: each target × scorer
minimum judged by its interval (``confidence`` declared) and each ``no_regression``
check with its p-values. A check stopped before any test (doubtful evidence, a plan too
small, no usable baseline) is not in it. The point-rate rule without ``confidence`` is
no test and stays as it is.

Each check carries two one-sided p-values, ``p_pass`` (H0: below the minimum, or worse
than the margin; small = evidence it passes) and ``p_fail`` (H0: at or above it); its
two-sided p-value is min(1, 2·min(p_pass, p_fail)). A check that its own test decided
keeps its verdict only when Holm rejects it at α = 1 − its confidence; otherwise it is
``inconclusive``, naming the adjusted p-value and the level it had to meet. Holm with a
single check is the plain test, so a one-check run is judged as before. Holm only ever
turns a decided check into ``inconclusive``: never the other way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from assay.gate._decide import TargetDecision
    from assay.spec import GatePolicy

HOLM = "holm"
NONE = "none"
DECIDED = ("passed", "failed")
Verdict = Literal["passed", "failed", "inconclusive"]


def minimum_head(scorer_id: str, passed: int, denominator: int) -> str:
    """How a minimum check's reason begins (the gate's and the adjustment's common key)."""
    return f"{scorer_id}: pass rate {passed}/{denominator} = "


def minimum_status(p_pass: float, p_fail: float, alpha: float) -> Verdict:
    """The interval verdict from the one-sided p-values at the minimum, α two-sided.

    The lower bound meets the minimum exactly when ``p_pass`` ≤ α/2; the upper bound is
    below it exactly when ``p_fail`` < α/2.
    """
    if p_pass <= alpha / 2.0:
        return "passed"
    if p_fail < alpha / 2.0:
        return "failed"
    return "inconclusive"


def two_sided(p_pass: float, p_fail: float) -> float:
    """The two-sided p-value of a check from its one-sided ones."""
    return min(1.0, 2.0 * min(p_pass, p_fail))


def holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values: reject check i at α exactly when its value is ≤ α."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


class _Check(msgspec.Struct):
    """One family member: where it lives in the decisions, its p-value and its level."""

    target: int
    scorer_id: str
    kind: str  # "minimum" or "regression"
    reason: str
    status: str
    p_value: float
    alpha: float


def adjust_for_multiplicity(
    policy: GatePolicy, decisions: list[TargetDecision]
) -> list[TargetDecision]:
    """The decisions after Holm's adjustment over all their tested checks (the policy's
    ``multiplicity``); with ``none`` only the p-values are recorded."""
    family = _family(policy, decisions)
    if not family:
        return decisions
    method = policy.multiplicity_method
    raw = [c.p_value for c in family]
    adjusted = holm(raw) if method == HOLM else raw
    levels = _holm_levels(family, raw) if method == HOLM else [c.alpha for c in family]
    updated = list(decisions)
    for check, p_adjusted, level in zip(family, adjusted, levels, strict=True):
        keep = method == NONE or check.status not in DECIDED or p_adjusted <= check.alpha
        updated[check.target] = _record(
            updated[check.target], check, p_adjusted, level, method, len(family), keep
        )
    return updated


def _family(policy: GatePolicy, decisions: list[TargetDecision]) -> list[_Check]:
    family = []
    alpha = 1.0 - policy.confidence_level
    for index, decision in enumerate(decisions):
        if not decision.gated:
            continue
        for scorer_id, numbers in decision.numbers.items():
            p_pass, p_fail = numbers.get("p_pass"), numbers.get("p_fail")
            if not isinstance(p_pass, float) or not isinstance(p_fail, float):
                continue
            reason = _minimum_reason(decision, scorer_id, numbers)
            if reason is None:  # never judged: evidence or plan size stopped it first
                continue
            status = minimum_status(p_pass, p_fail, alpha)
            p_value = two_sided(p_pass, p_fail)
            family.append(_Check(index, scorer_id, "minimum", reason, status, p_value, alpha))
        for check in decision.regression:
            if check.reason not in decision.reasons or min(check.p_pass, check.p_fail) >= 1.0:
                continue  # not judged, or no test behind it (no usable baseline)
            p_value = two_sided(check.p_pass, check.p_fail)
            level = 1.0 - check.ci_level
            family.append(
                _Check(index, check.scorer_id, "regression", check.reason, check.status,
                       p_value, level)
            )  # fmt: skip
    return family


def _minimum_reason(
    decision: TargetDecision, scorer_id: str, numbers: dict[str, Any]
) -> str | None:
    head = minimum_head(scorer_id, int(numbers["passed"]), int(numbers["denominator"]))
    return next((r for r in decision.reasons if r.startswith(head)), None)


def _holm_levels(family: list[_Check], raw: list[float]) -> list[float]:
    """The level each check's raw p-value is held to at its rank: α / (m − rank)."""
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    levels = [0.0] * len(raw)
    for rank, index in enumerate(order):
        levels[index] = family[index].alpha / (len(raw) - rank)
    return levels


def _record(
    decision: TargetDecision,
    check: _Check,
    p_adjusted: float,
    level: float,
    method: str,
    size: int,
    keep: bool,
) -> TargetDecision:
    """*decision* with the check's adjusted numbers, and its verdict withdrawn if not kept."""
    prefix = "" if check.kind == "minimum" else "regression_"
    numbers = {k: dict(v) for k, v in decision.numbers.items()}
    numbers.setdefault(check.scorer_id, {}).update({
        f"{prefix}p_value": check.p_value,
        f"{prefix}p_adjusted": p_adjusted,
        f"{prefix}alpha_adjusted": level,
        "multiplicity": method,
        "family_size": size,
    })  # fmt: skip
    if keep:
        return msgspec.structs.replace(decision, numbers=numbers)
    reason = (
        f"{check.reason}; but not after Holm's adjustment over {size} gated checks "
        f"(p = {check.p_value:.3g}, adjusted p = {p_adjusted:.3g} > {check.alpha:g}; this "
        f"check's level {level:.3g}): inconclusive"
    )
    reasons = [reason if r == check.reason else r for r in decision.reasons]
    regression = [
        msgspec.structs.replace(c, status="inconclusive", reason=reason)
        if check.kind == "regression" and c.reason == check.reason
        else c
        for c in decision.regression
    ]
    return msgspec.structs.replace(
        decision, status="inconclusive", reasons=reasons, numbers=numbers, regression=regression
    )
