"""Render a Report as JSON, Markdown and standalone HTML (no external resources)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

from assay.evidence import Usage
from assay.gate import NOT_GATED
from assay.plan._plan import is_shard_reason
from assay.report._model import MAX_TRIAL_ROWS, Report, TrialRow
from assay.score import MetricEstimate

if TYPE_CHECKING:
    pass


def to_json(report: Report) -> bytes:
    """Indented JSON, keys in schema order, ending with a newline."""
    return msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n"


_MD_INLINE = re.compile(r"([\\`*|\[\]~])")
_MD_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_MD_PLAIN = re.compile(r"[^&<>\r\n\\`*|\[\]~_]*")
_MD_LINE_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|[-+=](?=[\s=-]|$)|\d+[.)](?=\s|$))")


def md_escape(value: object) -> str:
    """Make any text inert in Markdown while it still reads as plain text.

    Only what Markdown would act on is escaped: ``<``, ``>`` and ``&`` as HTML entities
    (no raw HTML), a backslash, backtick, ``*``, ``|`` (a table cell), ``[``/``]`` (a
    link), ``~``, an ``_`` that could start or end emphasis (not one inside a word such
    as ``accuracy_by_topic``), and a leading ``# ``, ``- ``, ``+ ``, ``1. `` or ``---``
    that would start a heading, a list or a rule. ``shipping-fee`` and ``0.6667`` stay as
    they are; line breaks become spaces (one value never splits a table row).
    """
    text = str(value)
    if _MD_PLAIN.fullmatch(text) and not _MD_LINE_START.match(text):
        return text  # nothing to escape (most ids, states, numbers): one pass in C
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\r", " ").replace("\n", " ")
    text = _MD_INLINE.sub(r"\\\1", text)
    text = _MD_EDGE_UNDERSCORE.sub(r"\\_", text)
    return _MD_LINE_START.sub(_escape_marker, text, count=1)


def _escape_marker(match: re.Match[str]) -> str:
    """``\\#``, ``\\-`` ...; an ordered list's ``1.`` becomes ``1\\.`` (CommonMark
    escapes the punctuation, not the digit)."""
    space, marker = match.group(1), match.group(2)
    if marker[0].isdigit():
        return f"{space}{marker[:-1]}\\{marker[-1]}"
    return f"{space}\\{marker}"


def gate_note(report: Report) -> str:
    """What a verdict that is not a check's needs said beside it: why nothing was gated,
    what stopped the run, or that a shard's gate is partial; ``""`` for passed, failed
    and an inconclusive check."""
    gate = report.gate
    if gate.status == "ungated":
        return NOT_GATED
    if gate.status == "stopped":
        cause = gate.reasons[0] if gate.reasons else "a fatal error"
        return f"the run stopped before its end: {cause}"
    if gate.status == "inconclusive" and gate.reasons and is_shard_reason(gate.reasons[0]):
        return gate.reasons[0]  # a shard's: partial until its shards are merged
    return ""


def to_markdown(report: Report) -> str:
    """A review-friendly Markdown summary: gate, per-target metrics, the trials."""
    e = md_escape
    lines = [f"# Evaluation {e(report.evaluation)}", "", *_gate_lines(report)]
    lines += [
        f"- spec digest: `{report.spec_digest}`",
        f"- run status: {e(report.run_status)}; planned trials: {report.planned}",
        "",
        "## Targets",
        "",
        *_target_lines(report),
    ]
    lines += _task_metric_lines(report)
    lines += _mean_lines(report)
    lines += _regression_lines(report)
    lines += _usage_lines(report)
    lines += _grading_lines(report)
    lines += ["", "## Gate reasons", "", *_reason_lines(report)]
    lines += _comparison_lines(report)
    lines += ["", "## Trials", ""]
    if report.trials_omitted:
        lines.append(omitted_note(report))
        lines.append("")
    lines += [
        "| # | trial | target | sample | rep | state | scores |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.trials:
        lines.append(
            f"| {row.index} | `{row.trial_id}` | {e(row.target_id)} | {e(row.sample_id)} | "
            f"{row.repetition} | {row.state} | {e(_scores_text(row))} |"
        )
    return "\n".join(lines) + "\n"


SUMMARY_TRIALS = 20
"""Non-passing trials a CI summary lists (report.md lists them all)."""


def to_summary(report: Report) -> str:
    """The Markdown a CI job page shows (``$GITHUB_STEP_SUMMARY``): the gate, the
    targets, task metrics, the reasons and the first non-passing trials."""
    e = md_escape
    lines = [f"### assay: {e(report.evaluation)}", "", *_gate_lines(report)]
    lines += [*_target_lines(report), *_task_metric_lines(report)]
    reasons = _reason_lines(report)
    if reasons:
        lines += ["", *reasons]
    failing = [row for row in report.trials if _not_passing(row)]
    if failing:
        lines += ["", "| target | sample | rep | state | scores |", "|---|---|---|---|---|"]
        for row in failing[:SUMMARY_TRIALS]:
            lines.append(
                f"| {e(row.target_id)} | {e(row.sample_id)} | {row.repetition} | "
                f"{row.state} | {e(_scores_text(row))} |"
            )
        if len(failing) > SUMMARY_TRIALS:
            lines += [
                "",
                f"{len(failing) - SUMMARY_TRIALS} more non-passing trial(s): see report.md.",
            ]
    return "\n".join(lines) + "\n\n"


def _not_passing(row: TrialRow) -> bool:
    return any(status != "passed" for status in row.scores.values())


def _scores_text(row: TrialRow) -> str:
    return "; ".join(
        f"{k}: {v}" + (f" ({row.reasons[k]})" if row.reasons.get(k) else "")
        for k, v in row.scores.items()
    )


def _gate_lines(report: Report) -> list[str]:
    note = gate_note(report)
    return [
        f"**Gate: {report.gate.status.upper()}**" + (f" — {md_escape(note)}" if note else ""),
        "",
    ]


def _target_lines(report: Report) -> list[str]:
    e = md_escape
    lines = [
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
    return lines


def _reason_lines(report: Report) -> list[str]:
    return [
        f"- {md_escape(decision.target_id)} ({decision.status}): {md_escape(reason)}"
        for decision in report.gate.targets
        for reason in decision.reasons
    ]


def task_metric_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """(target, scorer, metric, value) of a Python task's metrics (``report.task_metrics``):
    a grouped metric (``accuracy_by_topic``) gives one row per group, named
    ``metric · group``; values as ``0.6667``."""
    rows = []
    for target, by_scorer in report.task_metrics.items():
        for scorer_id, metrics in by_scorer.items():
            for name, value in metrics.items():
                if isinstance(value, dict):
                    for group, grouped in value.items():
                        rows.append((target, scorer_id, f"{name} · {group}", _metric_text(grouped)))
                else:
                    rows.append((target, scorer_id, name, _metric_text(value)))
    return rows


def _metric_text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _task_metric_lines(report: Report) -> list[str]:
    rows = task_metric_rows(report)
    if not rows:
        return []
    e = md_escape
    lines = ["", "## Task metrics", "", "| target | scorer | metric | value |", "|---|---|---|---|"]
    for target, scorer_id, name, value in rows:
        lines.append(f"| {e(target)} | {e(scorer_id)} | {e(name)} | {e(value)} |")
    return lines


def omitted_note(report: Report) -> str:
    """What a big run's report leaves out, and which trials it kept."""
    return (
        f"{report.trials_omitted:,} trial(s) not listed: a report lists at most "
        f"{MAX_TRIAL_ROWS:,} trials, the non-passing ones first, then passing ones "
        "(`assay export RUN` writes every trial)."
    )


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


def grading_rows(report: Report) -> list[tuple[str, str, Usage]]:
    """(target, scorer, usage) of every scorer that called a model, then the total row
    (scorer ``""``) when there is more than one; ``[]`` when no scorer called a model."""
    rows = [
        (target, scorer_id, usage)
        for target, by_scorer in report.grading_usage.items()
        for scorer_id, usage in by_scorer.items()
    ]
    if len(rows) > 1:
        rows.append(("all grading", "", report.grading_usage_total))
    return rows


def _grading_lines(report: Report) -> list[str]:
    rows = grading_rows(report)
    if not rows:
        return []
    lines = [
        "",
        "## Grading usage",
        "",
        "Model calls made by scorers (graders), counted apart from the targets' usage.",
        "",
        "| target | scorer | calls | cached | input tokens | output tokens | total tokens | cost |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for target, scorer_id, u in rows:
        lines.append(
            f"| {md_escape(target)} | {md_escape(scorer_id)} | {u.calls} | {u.cached_calls} | "
            f"{u.input_tokens} | {u.output_tokens} | {u.total_tokens} | "
            f"{md_escape(cost_text(u.cost))} |"
        )
    return lines


def _interval_text(est: MetricEstimate) -> str:
    return f"{est.ci_level:.0%} {est.ci_method} [{est.ci_low:.4f}, {est.ci_high:.4f}]"


def _stderr_text(est: MetricEstimate) -> str:
    if est.cluster_stderr is None:
        return f"{est.stderr:.4f}"
    return f"{est.stderr:.4f} (by sample {est.cluster_stderr:.4f})"


def _mean_lines(report: Report) -> list[str]:
    if not report.metrics.means:
        return []
    e = md_escape
    lines = [
        "",
        "## Mean scores",
        "",
        "| target | scorer | mean | interval | samples | ± stderr |",
        "|---|---|---|---|---|---|",
    ]
    for m in report.metrics.means:
        lines.append(
            f"| {e(m.target_id)} | {e(m.scorer_id)} | {m.value:.4f} | {m.ci_level:.0%} "
            f"{m.ci_method} ({m.resamples} resamples) [{m.ci_low:.4f}, {m.ci_high:.4f}] | "
            f"{m.samples} | {m.stderr:.4f} |"
        )
    return lines


def _regression_lines(report: Report) -> list[str]:
    baseline = report.gate.baseline
    if baseline is None:
        return []
    e = md_escape
    lines = ["", "## No regression against the baseline", ""]
    lines.append(f"- baseline: {e(baseline.path or '(none)')}")
    if baseline.spec_digest:
        lines.append(f"- baseline spec digest: `{baseline.spec_digest}`")
    if baseline.events_head:
        lines.append(f"- baseline events head: `{baseline.events_head}`")
    if baseline.problem:
        lines.append(f"- **not usable**: {e(baseline.problem)}")
    lines += [
        "",
        "| target | scorer | verdict | measure | pairs | baseline → new | new − baseline "
        "| interval | margin | p | baseline only | new only | unpaired (baseline / new) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for decision in report.gate.targets:
        for c in decision.regression:
            lines.append(
                f"| {e(decision.target_id)} | {e(c.scorer_id)} | {c.status} | {c.measure} | "
                f"{c.pairs} | {c.rate_baseline:.4f} → {c.rate_new:.4f} | "
                f"{c.difference:+.4f} | {c.ci_level:.0%} {e(c.ci_method)} "
                f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {c.margin:g} | {c.p_value:.4g} "
                f"({e(c.test)}) | {c.baseline_only} | {c.new_only} | "
                f"{c.unpaired_baseline} / {c.unpaired_new} |"
            )
    return lines


def _comparison_lines(report: Report) -> list[str]:
    if not report.comparisons:
        return []
    e = md_escape
    lines = [
        "",
        "## Paired comparisons",
        "",
        COMPARISONS_NOTE,
        "",
        "| A | B | scorer | measure | pairs | A | B | B − A | interval | A only | B only "
        "| p | p (Holm) | test |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in report.comparisons:
        lines.append(
            f"| {e(c.a)} | {e(c.b)} | {e(c.scorer_id)} | {c.measure} | {c.pairs} | "
            f"{c.rate_a:.4f} | {c.rate_b:.4f} | {c.difference:+.4f} | {c.ci_level:.0%} "
            f"{e(c.ci_method)} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] | {c.a_only} | "
            f"{c.b_only} | {c.p_value:.4g} | {c.p_adjusted:.4g} | {e(c.test)} |"
        )
    for c in report.comparisons:
        if not c.flipped:
            continue
        title = "Largest differences" if c.measure == "mean" else "Flipped"
        lines += ["", f"### {title}: {e(c.a)} vs {e(c.b)} ({e(c.scorer_id)})", ""]
        lines += ["| sample | rep | A | B |", "|---|---|---|---|"]
        for f in c.flipped:
            lines.append(f"| {e(f.sample_id)} | {f.repetition} | {e(f.a)} | {e(f.b)} |")
        if c.flipped_omitted:
            lines += ["", f"{c.flipped_omitted} more flipped pair(s) not listed."]
    return lines


COMPARISONS_NOTE = (
    "B − A per pair of targets, paired by sample: the interval is Tango's score interval "
    "(over (sample, repetition) pairs, or over per-sample means as fractional discordant "
    "pairs for continuous scores and repetitions); with repetitions the per-sample test "
    "(sign test on means, or McNemar clustered by sample) comes first. A only / B only: "
    "the discordant pairs (for means, the samples where that side scored higher). "
    "p (Holm): the p-value adjusted over every comparison of this report: read it, not p, "
    "before calling a difference significant."
)
