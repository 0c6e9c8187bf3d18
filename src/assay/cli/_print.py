"""Printing a gate decision the same way for ``run``, ``score`` and ``gate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from assay._messages import say
from assay.errors import EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_PASSED
from assay.gate import GateDecision
from assay.score import Metrics

if TYPE_CHECKING:
    from assay.evidence import Usage
    from assay.report import Report

EXIT_BY_STATUS = {"passed": EXIT_PASSED, "failed": EXIT_FAILED, "inconclusive": EXIT_INCONCLUSIVE}


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
                    status=decision.status if decision.gated else "-",
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
    click.echo(say("out.gate", status=gate.status))
    if gate.status != "passed":
        for decision in gate.targets:
            if decision.gated and decision.status != "passed":
                for reason in decision.reasons:
                    click.echo(say("out.reason", target=decision.target_id, reason=reason))
    return EXIT_BY_STATUS[gate.status]


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
