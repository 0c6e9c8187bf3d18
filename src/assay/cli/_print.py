"""Printing a gate decision the same way for ``run``, ``score`` and ``gate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from assay._messages import say
from assay.errors import EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_PASSED, EXIT_RUN
from assay.gate import GateDecision
from assay.score import Metrics

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
    """Print one line per target and scorer, the gate and its reasons; return the exit code."""
    for decision in gate.targets:
        for scorer_id in scorers:
            est = metrics.estimate(decision.target_id, scorer_id)
            minimum = (
                say("out.minimum", minimum=decision.minimum) if decision.minimum is not None else ""
            )
            click.echo(
                say(
                    "out.target",
                    target=decision.target_id,
                    status=decision.status,
                    scorer=scorer_id,
                    passed=est.passed,
                    denominator=est.denominator,
                    rate=est.value,
                    level=est.ci_level,
                    low=est.ci_low,
                    high=est.ci_high,
                    minimum=minimum,
                )
            )
    click.echo(gate_line(gate))
    if gate.status in ("failed", "inconclusive", "stopped"):
        for decision in gate.targets:
            if decision.status in ("failed", "inconclusive"):
                for reason in decision.reasons:
                    click.echo(say("out.reason", target=decision.target_id, reason=reason))
    return EXIT_BY_STATUS[gate.status]


def gate_line(gate: GateDecision) -> str:
    """The run's verdict in one line: ``gate: passed``; never ``passed`` when nothing
    was gated (a neutral "not gated"), and the cause when the run stopped."""
    if gate.status == "ungated":
        return say("out.gate_ungated")
    if gate.status == "stopped":
        return say("out.gate_stopped", cause=gate.reasons[0] if gate.reasons else "")
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
