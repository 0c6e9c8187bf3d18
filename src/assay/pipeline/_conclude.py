"""Concluding a run: metrics, the gate's verdict, reports, and the seal.

Why its own module: a run ends in one of two ways that must judge it the same way:
complete, or stopped by a fatal error after some trials (its gate then ``stopped``,
naming the cause, with its reports still written). Both go through ``conclude``; the
run loop in ``_run`` only decides which.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assay._messages import render
from assay.errors import RunError
from assay.evidence import score_records
from assay.gate import GateDecision, decide
from assay.gate._sequential import STOPPED, sequential_gate
from assay.pipeline._baseline import regression_of
from assay.pipeline._errors import ErrorBudget
from assay.pipeline._reports import build_report, render_reports
from assay.pipeline._seal import sealed_digests, write_indexes
from assay.plan import SHARD_REASON
from assay.report import Report
from assay.score import Metrics

if TYPE_CHECKING:
    from assay.pipeline._run import _Run
    from assay.report._details_ahead import DetailsAhead


class RunOutcome(msgspec.Struct):
    """What a run produced: where its evidence is, its metrics, gate, report, errors."""

    path: Path | None
    spec_digest: str
    metrics: Metrics
    gate: GateDecision
    report: Report
    errors: ErrorBudget


class RunStopped(RunError):
    """A run that stopped on a fatal error *cause* after writing its reports: the
    error, with the ``outcome`` they were made from (its gate is ``stopped``)."""

    def __init__(self, cause: RunError, outcome: RunOutcome) -> None:
        super().__init__(cause.key, **cause.params)
        self.outcome = outcome


def stopped_run(run: _Run, cause: RunError) -> RunError:
    """Conclude a run that stopped on *cause*: reports written, gate ``stopped``. When
    even that fails, the run is sealed as interrupted and *cause* is what is raised."""
    try:
        return RunStopped(cause, conclude(run, "interrupted", cause))
    except (OSError, RunError):
        with contextlib.suppress(OSError, RunError):
            run.seal("interrupted")
        return cause


def conclude(
    run: _Run, status: str, cause: RunError | None = None, ahead: DetailsAhead | None = None
) -> RunOutcome:
    """Judge what the run has (metrics, gate, reports), record it and seal the run as
    *status*; a run stopped by *cause* has its gate ``stopped``, naming it. *ahead*:
    the listed trials' details, read while the run went on."""
    run.concluding = True
    metrics = run.metrics.build()
    run.writer.flush()  # every score line on disk before they are read back
    folder = run.source.parent if run.source is not None else None
    path = run.writer.path  # None in a dry run
    regression = regression_of(run.spec, folder, run.baseline, _scores_of(path), path)
    gate = decide(run.spec.gate, metrics, list(run.scorers), regression)
    if run.monitor is not None:
        gate = sequential_gate(run.spec.gate, gate, metrics, run.monitor)
        if run.monitor.stopped:
            unrun = sum(counts.states.get("not_run", 0) for counts in metrics.targets)
            run.run_event("not_run", {"trials": unrun, "reason": STOPPED})
    if run.shard is not None:
        gate = shard_gate(gate, run.shard.label())
    if cause is not None:
        gate = stopped_gate(gate, cause)
    run.run_event("metrics", msgspec.to_builtins(metrics))
    run.run_event("gate", gate_event(gate))
    task_metrics = run.task_metrics.build(run.dataset.ids) if run.task_metrics else {}
    scores = _scores_of(path)
    report = build_report(run.spec, status, metrics, gate, run.rows, task_metrics, scores)
    rendered = render_reports(report, path, run.writer.store, ahead)
    run.writer.write_files(rendered)
    run.writer.flush()
    if path is not None:  # the indexes are a finished run's: a resume would outdate them
        known = run.writer.store.written_packs()
        bundles = run.writer.bundle_entries()
        indexes = write_indexes(path, known, bundles) if status == "complete" else {}
        files = sealed_digests(path, rendered, indexes, run.writer.digest)
    else:
        files = {}
    run.seal(status, files)
    return RunOutcome(path, run.spec.digest, metrics, gate, report, run.errors)


def stopped_gate(gate: GateDecision, cause: RunError) -> GateDecision:
    """*gate* as the verdict of a run *cause* stopped: status ``stopped``, the cause
    first among the reasons (in English, as every reason of the reports and the chain
    is), each target's own verdict kept (its unrun trials named)."""
    why = render(cause.key, cause.params, "en")[0]
    return GateDecision("stopped", gate.targets, [why, *gate.reasons], gate.baseline)


def shard_gate(gate: GateDecision, label: str) -> GateDecision:
    """A shard's verdict: ``inconclusive`` whatever its part says, since a gate needs
    every sample (a paired comparison, a minimum over the whole dataset); its own
    decision is kept as the later reasons and per target."""
    why = SHARD_REASON.format(label=label)
    return GateDecision("inconclusive", gate.targets, [why, *gate.reasons], gate.baseline)


def _scores_of(path: Path | None) -> Iterator[dict[str, Any]] | None:
    return score_records(path) if path is not None else None  # a dry run wrote none


def gate_event(gate: GateDecision) -> dict[str, Any]:
    """The data of the run's ``gate`` event: the verdict, and the baseline it relied on."""
    data: dict[str, Any] = {"status": gate.status, "reasons": gate.reasons}
    if gate.baseline is not None:
        data["baseline"] = msgspec.to_builtins(gate.baseline)
    return data
