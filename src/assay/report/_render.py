"""Render a Report as JSON, Markdown and standalone HTML (no external resources)."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

import msgspec

from assay.evidence import Usage
from assay.report._chart import interval_chart
from assay.report._model import Report
from assay.score import MetricEstimate

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
        "| target | gate | scorer | pass rate | interval | passed / denominator | ± stderr "
        "| trial states |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for decision in report.gate.targets:
        states = report.metrics.counts(decision.target_id).states
        state_text = ", ".join(f"{k} {v}" for k, v in states.items() if v)
        for scorer_id in report.scorers:
            est = report.metrics.estimate(decision.target_id, scorer_id)
            lines.append(
                f"| {e(decision.target_id)} | {decision.status} | {e(scorer_id)} | "
                f"{est.value:.4f} | {_interval_text(est)} | {est.passed} / {est.denominator} | "
                f"{_stderr_text(est)} | {e(state_text)} |"
            )
    lines += _usage_lines(report)
    lines += ["", "## Gate reasons", ""]
    for decision in report.gate.targets:
        for reason in decision.reasons:
            lines.append(f"- {e(decision.target_id)} ({decision.status}): {e(reason)}")
    lines += _comparison_lines(report)
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


def cost_text(cost: float | None) -> str:
    """A cost as shown to people: ``$0.0123``, or ``unknown`` when a call had no price."""
    return "unknown" if cost is None else f"${cost:.4f}" if cost >= 0.01 else f"${cost:.6f}"


def has_usage(report: Report) -> bool:
    """True when some trial called a model or reported tokens (else no usage table)."""
    return not report.usage_total.empty


def _usage_lines(report: Report) -> list[str]:
    if not has_usage(report):
        return []
    lines = [
        "",
        "## Usage",
        "",
        "| target | calls | cached | input tokens | output tokens | total tokens | cost |",
        "|---|---|---|---|---|---|---|",
    ]
    rows: list[tuple[str, Usage]] = list(report.usage.items())
    if len(rows) > 1:
        rows.append(("all targets", report.usage_total))
    for target, u in rows:
        lines.append(
            f"| {md_escape(target)} | {u.calls} | {u.cached_calls} | {u.input_tokens} | "
            f"{u.output_tokens} | {u.total_tokens} | {md_escape(cost_text(u.cost))} |"
        )
    return lines


def _interval_text(est: MetricEstimate) -> str:
    return f"{est.ci_level:.0%} {est.ci_method} [{est.ci_low:.4f}, {est.ci_high:.4f}]"


def _stderr_text(est: MetricEstimate) -> str:
    if est.cluster_stderr is None:
        return f"{est.stderr:.4f}"
    return f"{est.stderr:.4f} (by sample {est.cluster_stderr:.4f})"


def _comparison_lines(report: Report) -> list[str]:
    if not report.comparisons:
        return []
    e = md_escape
    lines = [
        "",
        "## Paired comparisons",
        "",
        "| A | B | scorer | pairs | rate A | rate B | B − A | interval | A only | B only "
        "| p (exact McNemar) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in report.comparisons:
        lines.append(
            f"| {e(c.a)} | {e(c.b)} | {e(c.scorer_id)} | {c.pairs} | {c.rate_a:.4f} | "
            f"{c.rate_b:.4f} | {c.difference:+.4f} | {c.ci_level:.0%} [{c.ci_low:+.4f}, "
            f"{c.ci_high:+.4f}] | {c.a_only} | {c.b_only} | {c.p_value:.4g} |"
        )
    for c in report.comparisons:
        if not c.flipped:
            continue
        lines += ["", f"### Flipped: {e(c.a)} vs {e(c.b)} ({e(c.scorer_id)})", ""]
        lines += ["| sample | rep | A | B |", "|---|---|---|---|"]
        for f in c.flipped:
            lines.append(f"| {e(f.sample_id)} | {f.repetition} | {e(f.a)} | {e(f.b)} |")
        if c.flipped_omitted:
            lines += ["", f"{c.flipped_omitted} more flipped pair(s) not listed."]
    return lines


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
    return template.render(
        report=report, chart=interval_chart(report), cost_text=cost_text, usage=has_usage(report)
    )
