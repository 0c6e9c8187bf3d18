"""Printing a gate decision the same way for ``run``, ``score`` and ``gate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from assay._messages import say
from assay.errors import EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_PASSED, EXIT_RUN
from assay.gate import GateDecision, TargetDecision
from assay.plan._plan import is_shard_reason
from assay.score import MetricEstimate, Metrics

if TYPE_CHECKING:
    from assay.evidence import Usage
    from assay.report import Report

EXIT_BY_STATUS = {
    "passed": EXIT_PASSED,
    "ungated": EXIT_PASSED,  # nothing was checked; the line says so, not "passed"
    "failed": EXIT_FAILED,
    "inconclusive": EXIT_INCONCLUSIVE,
    "stopped": EXIT_RUN,
}


def print_decision(metrics: Metrics, gate: GateDecision, scorers: list[str]) -> int:
    """Print one line per target and scorer, the gate and its reasons; return the exit code.

    The interval on a gated scorer's line is the one the gate decided with (exact, and
    clustered by sample with repetitions), so the line and the verdict never disagree;
    an ungated scorer shows its metric's interval. A sequential run's verdict rests on
    its last look, not on the planned trials: its reasons (the look's counts and
    confidence sequence) are printed whatever the verdict.
    """
    for decision in gate.targets:
        for scorer_id in scorers:
            est = metrics.estimate(decision.target_id, scorer_id)
            passed, denominator = _counts(decision, scorer_id, est)
            level, low, high = _interval(decision, scorer_id, est)
            minimum = (
                say("out.minimum", minimum=decision.minimum) if decision.minimum is not None else ""
            )
            click.echo(
                say(
                    "out.target",
                    target=decision.target_id,
                    status=decision.status,
                    scorer=scorer_id,
                    passed=passed,
                    denominator=denominator,
                    rate=passed / denominator if denominator else 0.0,
                    level=level,
                    low=low,
                    high=high,
                    minimum=minimum,
                )
            )
    click.echo(gate_line(gate))
    for decision in gate.targets:
        if _explains(gate, decision):
            for reason in decision.reasons:
                click.echo(say("out.reason", target=decision.target_id, reason=reason))
    return EXIT_BY_STATUS[gate.status]


def _counts(
    decision: TargetDecision, scorer_id: str, estimate: MetricEstimate
) -> tuple[float, int]:
    """(passed, trials) behind the verdict: a sequential look's, else the planned trials'."""
    numbers = decision.numbers.get(scorer_id, {})
    passed, trials = numbers.get("looks_passed"), numbers.get("looks_trials")
    if isinstance(passed, (int, float)) and isinstance(trials, int):
        return passed, trials
    return estimate.passed, estimate.denominator


def _interval(
    decision: TargetDecision, scorer_id: str, estimate: MetricEstimate
) -> tuple[float, float, float]:
    """(level, low, high): the gate's own bounds for a gated scorer (a sequential look's
    confidence sequence), else the metric's interval."""
    numbers = decision.numbers.get(scorer_id, {}) if decision.gated else {}
    low, high, level = numbers.get("ci_low"), numbers.get("ci_high"), numbers.get("ci_level")
    if "cs_low" in numbers:
        low, high = numbers.get("cs_low"), numbers.get("cs_high")
    if isinstance(low, float) and isinstance(high, float) and isinstance(level, float):
        return level, low, high
    return estimate.ci_level, estimate.ci_low, estimate.ci_high


def _explains(gate: GateDecision, decision: TargetDecision) -> bool:
    """Whether a target's reasons are printed: when it did not pass, or when its verdict
    comes from a sequential look (the planned-trial line above does not show it)."""
    failed = decision.status in ("failed", "inconclusive")
    if gate.status in ("failed", "inconclusive", "stopped") and failed:
        return True
    return any("cs_low" in numbers for numbers in decision.numbers.values())


def gate_line(gate: GateDecision) -> str:
    """The run's verdict in one line: ``gate: passed``; never ``passed`` when nothing
    was gated (a neutral "not gated"), and the cause when the run stopped."""
    if gate.status == "ungated":
        return say("out.gate_ungated")
    if gate.status == "stopped":
        return say("out.gate_stopped", cause=gate.reasons[0] if gate.reasons else "")
    if gate.status == "inconclusive" and gate.reasons and is_shard_reason(gate.reasons[0]):
        return say("out.gate_shard", reason=gate.reasons[0])
    return say("out.gate", status=gate.status)


def print_usage(report: Report) -> None:
    """The usage line of a run: the targets' calls, tokens and cost, then grading's
    (the scorers' model calls) beside them; nothing when no model was called."""
    if report.usage_total.empty and report.grading_usage_total.empty:
        return
    line = _usage_text("out.usage", report.usage_total)
    if not report.grading_usage_total.empty:
        line += _usage_text("out.grading_usage", report.grading_usage_total)
    click.echo(line)


def _usage_text(key: str, usage: Usage) -> str:
    from assay.report import cost_text  # deferred: keeps the CLI's start-up light

    return say(
        key,
        calls=usage.calls,
        cached=usage.cached_calls,
        input=usage.input_tokens,
        output=usage.output_tokens,
        cost=cost_text(usage.cost),
    )
