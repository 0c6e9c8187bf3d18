"""Render a Report as JSON, Markdown and standalone HTML (no external resources)."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

import msgspec

from assay.report._model import Report

if TYPE_CHECKING:
    import jinja2


def to_json(report: Report) -> bytes:
    """Indented JSON, keys in schema order, ending with a newline."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def md_escape(value: object) -> str:
    """Make any text inert in Markdown: HTML entities for <>&, backslashes for the rest."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def to_markdown(report: Report) -> str:
    """A review-friendly Markdown summary: gate, per-target metrics, the trials."""
    e = md_escape
    lines = [
        f"# Evaluation {e(report.evaluation)}",
        "",
        f"**Gate: {report.gate.status.upper()}**",
        "",
        f"- spec digest: `{report.spec_digest}`",
        f"- run status: {e(report.run_status)}; planned trials: {report.planned}",
        "",
        "## Targets",
        "",
        "| target | gate | scorer | pass rate | passed / denominator | ± stderr | trial states |",
        "|---|---|---|---|---|---|---|",
    ]
    for decision in report.gate.targets:
        states = report.metrics.counts(decision.target_id).states
        state_text = ", ".join(f"{k} {v}" for k, v in states.items() if v)
        for scorer_id in report.scorers:
            est = report.metrics.estimate(decision.target_id, scorer_id)
            lines.append(
                f"| {e(decision.target_id)} | {decision.status} | {e(scorer_id)} | "
                f"{est.value:.4f} | {est.passed} / {est.denominator} | {est.stderr:.4f} | "
                f"{e(state_text)} |"
            )
    lines += ["", "## Gate reasons", ""]
    for decision in report.gate.targets:
        for reason in decision.reasons:
            lines.append(f"- {e(decision.target_id)} ({decision.status}): {e(reason)}")
    lines += ["", "## Trials", ""]
    if report.trials_omitted:
        lines.append(f"{report.trials_omitted} passing trial(s) not listed.")
        lines.append("")
    lines += [
        "| # | trial | target | sample | rep | state | scores |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.trials:
        scores = "; ".join(
            f"{k}: {v}" + (f" ({row.reasons[k]})" if row.reasons.get(k) else "")
            for k, v in row.scores.items()
        )
        lines.append(
            f"| {row.index} | `{row.trial_id}` | {e(row.target_id)} | {e(row.sample_id)} | "
            f"{row.repetition} | {row.state} | {e(scores)} |"
        )
    return "\n".join(lines) + "\n"


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # deferred: only writing HTML needs it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("assay.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def to_html(report: Report) -> str:
    """A standalone HTML page; every value is escaped by the template engine."""
    template = _environment().get_template("report.html.j2")
    return template.render(report=report)
