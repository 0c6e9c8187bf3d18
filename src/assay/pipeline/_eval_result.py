"""What ``eval`` returns per task × model unit, and how a unit's run becomes one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from assay.gate import GateDecision
from assay.pipeline._conclude import RunOutcome
from assay.report import Report, read_report
from assay.score import Metrics

if TYPE_CHECKING:
    from assay.log import EvalResults, EvalSample, EvalSpec
    from assay.log._stats import EvalStats


class EvalResult(msgspec.Struct):
    """One task × model unit: how it ended, its metrics, gate, report and directory.

    ``status`` is ``success`` only for a unit that ran to its end with every score
    judged; otherwise ``error``, with ``error`` saying why: errors past
    ``fail_on_error`` (the run stopped; its gate is ``stopped``, its reports written),
    scorer errors (a scorer raised or returned an invalid value), or a failure before
    the run (then no gate).
    """

    task: str
    model: str
    status: Literal["success", "error"]
    path: Path | None = None
    metrics: Metrics | None = None
    task_metrics: dict[str, Any] = {}
    gate: GateDecision | None = None
    report: Report | None = None
    error: str | None = None
    attempts: int = 1
    exit_code: int | None = None
    """The exit code of the assay error that ended the unit before its run began (2 for
    a setting, solver, sample or approval file refused), for the command line; None for
    a unit whose run began."""

    @property
    def results(self) -> EvalResults | None:
        """Inspect's ``log.results``: each scorer's metrics (``results.scores[0]
        .metrics["accuracy"].value``); ``None`` for a unit that failed before its run."""
        if self.report is None:
            return None
        from assay.log._read import results_of_report
        from assay.log._reducers import reducers_of

        return results_of_report(self.report, reducers_of(self.path))

    @property
    def samples(self) -> list[EvalSample] | None:
        """Inspect's ``log.samples``: every trial read back from the run (each checked
        against its digests); ``None`` for a unit that failed before its run."""
        if self.path is None:
            return None
        from assay.log._read import read_eval_log_samples

        return list(read_eval_log_samples(self.path))

    @property
    def eval(self) -> EvalSpec | None:
        """Inspect's ``log.eval``: the run's header (``task``, ``model``, ``task_args``)."""
        if self.path is None:
            return None
        from assay.log._read import read_eval_log

        return read_eval_log(self.path, header_only=True).eval

    @property
    def stats(self) -> EvalStats | None:
        """Inspect's ``log.stats``: start and end times, each model's token usage."""
        if self.path is None:
            return None
        from assay.log._stats import stats_of

        return stats_of(self.path, self.report)

    @property
    def location(self) -> str | None:
        """Inspect's ``log.location``: the run directory, as text."""
        return str(self.path) if self.path is not None else None


def completed_result(task: str, model: str, path: Path) -> EvalResult:
    """The result of a unit whose run at *path* was already complete (``attempts`` 0:
    nothing ran now), read back from its sealed report."""
    report = read_report(path)
    error = scorer_errors(report)
    return EvalResult(
        task=task,
        model=model,
        status="error" if error else "success",
        error=error,
        path=path,
        metrics=report.metrics,
        task_metrics=report.task_metrics,
        gate=report.gate,
        report=report,
        attempts=0,
    )


def outcome_result(task: str, model: str, outcome: RunOutcome, error: str | None) -> EvalResult:
    """The result of a run of *task* × *model* that ended with *outcome*."""
    return EvalResult(
        task=task,
        model=model,
        status="error" if error else "success",
        error=error,
        path=outcome.path,
        metrics=outcome.metrics,
        task_metrics=outcome.report.task_metrics,
        gate=outcome.gate,
        report=outcome.report,
    )


def scorer_errors(report: Report) -> str | None:
    """Why a unit whose scorers failed is not a success: how many error scores, and the
    first one's explanation (which names the exception); ``None`` when there were none."""
    count = sum(e.statuses.get("error", 0) for e in report.metrics.estimates)
    if not count:
        return None
    first = next(
        (
            f"{scorer_id}: {row.reasons.get(scorer_id, '')}"
            for row in report.trials
            for scorer_id, status in row.scores.items()
            if status == "error"
        ),
        "",
    )
    return f"{count} scorer error(s) (the first: {first})"
