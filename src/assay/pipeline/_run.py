"""``run``: the whole pipeline, spec → plan → trials → evidence → scores → gate → reports.

Each finished trial is sealed into a bundle, scored and counted at once, so the run keeps
counters and a bounded list of report rows, never the whole result set, in memory.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

from assay import __version__
from assay.dataset import Dataset
from assay.evidence import HttpSink, LineSink, PrintSink, RunWriter, seal_bundle
from assay.evidence._rundir import BUNDLES, MANIFEST_SCHEMA, PLAN, REPORTS, SCORES
from assay.gate import GateDecision, decide
from assay.pipeline._bundle_of import bundle_of
from assay.pipeline._judge import judge
from assay.pipeline._options import RunOptions
from assay.pipeline._reports import build_report, render_reports
from assay.plan import Plan, Trial, plan
from assay.report import Report, TrialRows
from assay.run import execute, run_trial
from assay.score import Metrics, MetricsBuilder, build_scorer
from assay.spec import LoadedSpec
from assay.target import Target, build_target

FLUSH_EVERY = 0.2
"""Seconds between pushes of buffered evidence to the operating system."""


class RunOutcome(msgspec.Struct):
    """What a run produced: where its evidence is, its metrics, gate and report."""

    path: Path | None
    spec_digest: str
    metrics: Metrics
    gate: GateDecision
    report: Report


class _Run:
    """The state one run keeps: writers, targets, scorers and running counters."""

    def __init__(self, loaded: LoadedSpec, options: RunOptions) -> None:
        self.spec = loaded.spec
        self.dataset: Dataset = loaded.dataset
        self.plan: Plan = plan(loaded.spec, loaded.dataset.ids)
        self.targets: dict[str, Target] = {
            t.id: build_target(t, loaded.root) for t in loaded.spec.targets
        }
        self.scorers = {s.id: build_scorer(s) for s in loaded.spec.scorers}
        self.http: HttpSink | None = None
        sinks: list[LineSink] = []
        if options.dry_run:
            sinks.append(PrintSink())
        if options.sink_url:
            fallback = (
                None
                if options.dry_run or options.output is None
                else (options.output / "sink-fallback.jsonl")
            )
            self.http = HttpSink(
                options.sink_url, fallback, max_failure_rate=options.sink_max_failure_rate
            )
            sinks.append(self.http)
        self.writer = RunWriter(None if options.dry_run else options.output, sinks)
        self.metrics = MetricsBuilder(self.plan.denominators(), list(self.scorers))
        self.rows = TrialRows(len(self.plan))
        self.rng = random.Random()
        self.started = time.time()
        self.flushed = time.monotonic()

    def manifest(self, status: str, files: dict[str, str] | None = None) -> dict[str, Any]:
        return {
            "schema": MANIFEST_SCHEMA,
            "status": status,
            "evaluation": self.spec.evaluation,
            "spec_digest": self.spec.digest,
            "planned": len(self.plan),
            "events": self.writer.log.count,
            "events_head": self.writer.log.head,
            "files": files or {},
            "assay_version": __version__,
            "started_at": round(self.started, 3),
            "finished_at": round(time.time(), 3),
        }

    async def trial(self, trial: Trial) -> None:
        sample = self.dataset.sample(trial.sample_index)
        record = sample.to_record(self.spec.hidden_fields)
        recorder = self.writer.recorder(trial.trial_id)
        with recorder.bound():
            result = await run_trial(
                trial,
                sample,
                record,
                self.targets[trial.target_id],
                recorder,
                self.spec.retry,
                self.rng,
            )
        bundle = bundle_of(result, recorder, record["expected"])
        line, digest = seal_bundle(bundle)
        self.writer.write_bundle(line)
        output = result.outcome.output if result.outcome is not None else None
        records, row = judge(bundle, output, self.scorers, self.metrics)
        for score in records:
            recorder.record(
                "match",
                {"scorer": score["scorer_id"], "status": score["status"], "bundle": digest},
                parent=1,
            )
            self.writer.write_score(score)
        self.rows.add(row)
        if (now := time.monotonic()) - self.flushed > FLUSH_EVERY:
            # Bounded loss on kill -9: at most FLUSH_EVERY seconds of finished trials
            # are still in our buffers; events reach the OS before their bundles.
            self.writer.flush()
            self.flushed = now
        if self.http is not None:
            self.http.check()


async def run_spec_async(loaded: LoadedSpec, options: RunOptions) -> RunOutcome:
    """Run *loaded* end to end and write its evidence and reports."""
    run = _Run(loaded, options)
    try:
        run.writer.write_spec(run.spec.canonical())
        for trial in run.plan:
            run.writer.write_plan_line(msgspec.structs.asdict(trial))
        run.writer.write_manifest(run.manifest("running"))
        run.writer.log.append(None, 1, None, "run_started", {"spec_digest": run.spec.digest})
        await execute(run.plan, run.trial, options.max_concurrency)
        return _finish(run)
    except BaseException:
        with anyio.CancelScope(shield=True):
            run.writer.write_manifest(run.manifest("aborted"))
        raise
    finally:
        run.writer.close()


def _finish(run: _Run) -> RunOutcome:
    metrics = run.metrics.build()
    gate = decide(run.spec.gate, metrics, list(run.scorers))
    log = run.writer.log
    log.append(None, 2, 1, "metrics", msgspec.to_builtins(metrics))
    log.append(None, 3, 1, "gate", {"status": gate.status, "reasons": gate.reasons})
    report = build_report(run.spec, "complete", metrics, gate, run.rows)
    rendered = render_reports(report)
    for name, data in rendered.items():
        run.writer.write_file(name, data)
    run.writer.flush()
    files = _digests(run.writer.path, (PLAN, BUNDLES, SCORES), rendered)
    run.writer.write_manifest(run.manifest("complete", files))
    return RunOutcome(run.writer.path, run.spec.digest, metrics, gate, report)


def _digests(
    path: Path | None, names: tuple[str, ...], rendered: dict[str, bytes]
) -> dict[str, str]:
    if path is None:
        return {}
    from assay._digest import sha256_hex

    files = {name: "sha256:" + sha256_hex((path / name).read_bytes()) for name in names}
    files.update({name: "sha256:" + sha256_hex(data) for name, data in rendered.items()})
    assert set(rendered) == set(REPORTS)
    return files


def run_spec(loaded: LoadedSpec, options: RunOptions) -> RunOutcome:
    """Synchronous wrapper around ``run_spec_async``."""
    return anyio.run(run_spec_async, loaded, options)
