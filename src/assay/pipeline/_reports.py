"""Build the Report object and render its three files."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay import __version__
from assay.compare import compare_targets
from assay.evidence import ArtifactStore, Usage
from assay.gate import GateDecision
from assay.report import Report, TrialRows, to_html, to_json, to_markdown
from assay.score import Metrics
from assay.spec import EvalSpec

if TYPE_CHECKING:
    from assay.report._details_ahead import DetailsAhead


def build_report(
    spec: EvalSpec,
    status: str,
    metrics: Metrics,
    gate: GateDecision,
    rows: TrialRows,
    task_metrics: dict[str, Any] | None = None,
    scores: Iterable[dict[str, Any]] | None = None,
) -> Report:
    """The one report object every format is rendered from.

    *scores* (the run's score records, streamed) feed the paired comparisons; without
    them the report rows are used, which list every trial only in runs of up to 1,000.
    """
    return Report(
        evaluation=spec.evaluation,
        description=spec.description,
        spec_digest=spec.digest,
        run_status=status,
        planned=spec.dataset.samples * len(spec.targets) * spec.repetitions,
        targets=[t.id for t in spec.targets],
        scorers=[s.id for s in spec.scorers],
        metrics=metrics,
        gate=gate,
        trials=rows.in_plan_order(),
        trials_omitted=rows.omitted,
        assay_version=__version__,
        task_metrics=task_metrics or {},
        usage={t.id: rows.usage.get(t.id, Usage()) for t in spec.targets},
        usage_total=rows.usage_total(),
        grading_usage=_grading_usage(spec, rows),
        grading_usage_total=rows.grading_total(),
        comparisons=compare_targets(
            rows.in_plan_order() if scores is None else scores,  # type: ignore[arg-type]
            [t.id for t in spec.targets],
            [s.id for s in spec.scorers],
            spec.gate.confidence_level,
            spec.repetitions,
        ),
    )


def _grading_usage(spec: EvalSpec, rows: TrialRows) -> dict[str, dict[str, Usage]]:
    """Grading usage by target and scorer, in spec order; only scorers that called a model."""
    grading: dict[str, dict[str, Usage]] = {}
    for target in spec.targets:
        by_scorer = rows.grading.get(target.id, {})
        chosen = {s.id: by_scorer[s.id] for s in spec.scorers if s.id in by_scorer}
        if chosen:
            grading[target.id] = chosen
    return grading


def render_reports(
    report: Report,
    run: Path | None = None,
    store: ArtifactStore | None = None,
    ahead: DetailsAhead | None = None,
) -> dict[str, bytes]:
    """``report.json``, ``report.md`` and ``report.html`` as bytes; the HTML's trials
    open on their input, expected answer and answer, read from the run at *run* (its
    bundles and artifacts flushed; ``None`` for a dry run: scores only), through
    *store* when it is the run's own, still writing; by *ahead* (the same texts) when
    they were read while the run went on."""
    from assay.report._details import read_details

    listed = {row.trial_id for row in report.trials}
    details = ahead.finish(listed) if ahead is not None else read_details(run, listed, store)
    return {
        "report.json": to_json(report),
        "report.md": to_markdown(report).encode("utf-8"),
        "report.html": to_html(report, details, ahead.made if ahead else None).encode("utf-8"),
    }


def remove_reports(path: Path | None) -> None:
    """Delete the reports a stopped run wrote, as its resume starts: they judged a run
    that is going on again, and its manifest no longer lists them."""
    if path is None:
        return
    for name in ("report.json", "report.md", "report.html"):
        with contextlib.suppress(FileNotFoundError):
            (path / name).unlink()
