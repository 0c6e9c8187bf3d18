"""Printing a gate decision the same way for ``run``, ``score`` and ``gate``."""

from __future__ import annotations

import click

from assay._messages import say
from assay.errors import EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_PASSED
from assay.gate import GateDecision
from assay.score import Metrics

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
