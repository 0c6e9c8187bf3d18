"""``_Run``: what one run keeps (writers, targets, scorers, counters) and does per trial.

Each finished trial is sealed into a bundle, scored and counted at once, so the run keeps
counters and a bounded list of report rows, never the whole result set, in memory. The
same code finishes a resumed run: trials already finished are judged again from their
bundles (``_rejudge.py``) and only the rest are run. ``_execute.py`` drives it, spec →
plan → trials → evidence → scores → gate → reports.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from assay import __version__
from assay.evidence import (
    MANIFEST_SCHEMA,
    SINK_FALLBACK,
    HttpSink,
    LineSink,
    PrintSink,
    RunWriter,
    TrialRecorder,
    seal_bundle,
)
from assay.gate._sequential import STOPPED, Monitor, SequentialPlan, look_event
from assay.hooks import HookSet
from assay.model import current_cache, epoch_scope
from assay.pipeline._bundle_of import bundle_of
from assay.pipeline._errors import ErrorBudget
from assay.pipeline._hooks import sample_end, sample_start
from assay.pipeline._judge import judge, reads_raw
from assay.pipeline._lean import lean_fits, lean_runner
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared
from assay.pipeline._queue import Requeued, WorkQueue
from assay.pipeline._trial_sandboxes import RunSandboxes, bound
from assay.plan import Plan, Trial, plan
from assay.report import TrialRows
from assay.run import run_trial
from assay.score import MetricsBuilder
from assay.target import Target, TargetOutcome

if TYPE_CHECKING:
    from assay.report._details_ahead import DetailsAhead
    from assay.sandbox._lifecycle import TrialSandboxes

Runner = Callable[[Any], Awaitable[None]]
STORAGE = "run.storage"
"""The key of a storage error: the disk failed, so no report can be written either."""

FLUSH_EVERY = 0.2
"""Seconds between pushes of buffered evidence to the operating system."""


class _Run:
    """The state one run keeps: writers, targets, scorers and running counters."""

    def __init__(
        self, prepared: Prepared, options: RunOptions, *, resume: bool, hooks: HookSet
    ) -> None:
        self.spec = prepared.spec
        self.hooks = hooks if hooks else None  # None: no HookSet.__bool__ twice a trial
        self.source = prepared.source
        self.dataset = prepared.dataset
        self.plan: Plan = plan(prepared.spec, prepared.dataset.ids)
        self.shard = options.shard
        self.shard_size = sum(self.plan.denominators(self.shard).values())
        self.targets: dict[str, Target] = prepared.targets
        self.workers = prepared.workers
        self.scorers = prepared.scorers
        self.task_metrics = prepared.new_task_metrics()
        self.errors = ErrorBudget(prepared.spec.errors, self.shard_size)
        self.retries = 0  # attempts after a trial's first, for the progress line
        self.queue = WorkQueue(iter(()))
        self.http: HttpSink | None = None
        output = None if options.dry_run else options.output
        self.writer = RunWriter(output, self._sinks(options, output), resume=resume)
        self.point = self.writer.resume_point
        self.run_events = self.point.run_events if self.point else 0
        self.metrics = MetricsBuilder(
            self.plan.denominators(self.shard),
            list(self.scorers),
            self.spec.repetitions,
            self.spec.gate.confidence_level,
        )
        self.rows = TrialRows(self.shard_size)
        self.ahead: DetailsAhead | None = None  # takes the listed trials' lines (_ahead)
        self.monitor = (
            Monitor(SequentialPlan(self.spec, list(self.scorers)))
            if self.spec.gate.stopping is not None
            else None
        )
        self.baseline = options.baseline
        self.sandboxes = RunSandboxes(
            prepared.sandboxes, options.max_sandboxes, options.sandbox_cleanup
        )
        self.rng = random.Random()
        self.raw = reads_raw(self.scorers)  # the judge leaves JSON output undecoded
        self.started = time.time()
        self.flushed = time.monotonic()
        self.concluding = False

    def _sinks(self, options: RunOptions, output: Path | None) -> list[LineSink]:
        sinks: list[LineSink] = []
        if options.dry_run:
            sinks.append(PrintSink())
        if options.sink_url:
            fallback = output / SINK_FALLBACK if output is not None else None
            self.http = HttpSink(
                options.sink_url, fallback, max_failure_rate=options.sink_max_failure_rate
            )
            sinks.append(self.http)
        return sinks

    def run_event(self, kind: str, data: dict[str, Any]) -> None:
        """Record a run-level event (``trial: null``), parented to the first one."""
        self.run_events += 1
        parent = None if self.run_events == 1 else 1
        self.writer.log.append(None, self.run_events, parent, kind, data)

    def seal(self, status: str, files: dict[str, str] | None = None) -> None:
        """Close the log with a run-level event repeating the manifest, then write it.

        The manifest's ``events_head`` is the hash of that event, so every field of the
        manifest is bound to the chain: editing one is caught by ``verify``.
        """
        fields = self.manifest_fields(status, files)
        self.run_event({"complete": "run_finished"}.get(status, "run_interrupted"), fields)
        self.writer.write_manifest(self.manifest(fields))

    def manifest(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {
            **fields,
            "schema": MANIFEST_SCHEMA,
            "events": self.writer.log.count,
            "events_head": self.writer.log.head,
        }

    def manifest_fields(self, status: str, files: dict[str, str] | None = None) -> dict[str, Any]:
        fields = self._fields(status, files)
        cache = current_cache()
        if cache is not None:  # so ``resume`` answers from the cache too, by default
            fields["cache"] = {"expiry": cache.expiry}
        return fields

    def _fields(self, status: str, files: dict[str, str] | None) -> dict[str, Any]:
        fields = self._common_fields(status, files)
        if self.shard is not None:  # bound to the chain like every field: verify reads it
            fields["shard"] = {
                "index": self.shard.index,
                "count": self.shard.count,
                "trials": self.shard_size,
            }
        return fields

    def _common_fields(self, status: str, files: dict[str, str] | None) -> dict[str, Any]:
        return {
            "status": status,
            "evaluation": self.spec.evaluation,
            "spec_digest": self.spec.digest,
            "spec_source": str(self.source),
            "planned": len(self.plan),
            "files": files or {},
            "assay_version": __version__,
            "started_at": round(self.started, 3),
            "finished_at": round(time.time(), 3),
        }

    def planned(self) -> Iterator[Trial]:
        """The trials this run is to run: the whole plan, or its shard's part."""
        shard, per_sample = self.shard, self.plan.per_sample
        if shard is None:  # no generator in between: it is asked once a trial
            return iter(self.plan)
        return (t for t in self.plan if shard.holds(t.index, per_sample))

    def recorder(self, trial_id: str) -> TrialRecorder:
        """A recorder for *trial_id*, continuing the numbering of an unfinished earlier try."""
        writer = self.writer  # writer.recorder, inlined (once a trial)
        recorder = TrialRecorder(writer.log, writer.store, trial_id)
        if self.point is not None and trial_id in self.point.orphans:
            usage = self.point.orphan_usage.get(trial_id)
            recorder.resume_after(*self.point.orphans[trial_id], usage)
        return recorder

    def work(self, pending: Iterator[Trial]) -> tuple[Iterator[Any], Runner]:
        """The items the executor takes and what it calls per item: the plan's trials
        and the lean path (``_lean``) when the run fits it; else a ``WorkQueue`` and
        ``trial``, or straight ``_trial`` when the run has no sandboxes (no context
        manager, nor a coroutine more, per trial)."""
        if lean_fits(self):
            return pending, lean_runner(self, judge)
        self.queue = WorkQueue(pending)
        if self.monitor is not None and self.monitor.stopped:
            self.queue.stop()  # a resumed run whose finished trials already decide it
        if self.sandboxes.needed:
            return self.queue, self.trial
        return self.queue, partial(self._trial, sandboxes=None)

    async def trial(self, item: Trial | Requeued) -> None:
        """Run one trial (or continue a re-queued one), then seal, judge and count it."""
        if not self.sandboxes.needed:  # no async context manager to enter per trial
            await self._trial(item, None)
            return
        trial_id = item.trial.trial_id if isinstance(item, Requeued) else item.trial_id
        async with self.sandboxes.around(trial_id) as sandboxes:
            await self._trial(item, sandboxes)

    async def _trial(self, item: Trial | Requeued, sandboxes: TrialSandboxes | None) -> None:
        if isinstance(item, Requeued):
            trial, recorder, earlier, tries = item.trial, item.recorder, item.attempts, item.tries
        else:
            trial, recorder, earlier, tries = item, self.recorder(item.trial_id), None, 0
        sample = self.dataset.sample(trial.sample_index)
        record = sample.to_record(self.spec.hidden_fields)
        if self.hooks is not None and not isinstance(item, Requeued):
            await self.hooks.emit("on_sample_start", sample_start(self.spec.evaluation, trial))
        with recorder.bound():  # one binding for the trial and its judging
            result = await run_trial(
                trial,
                sample,
                record,
                self.targets[trial.target_id],
                recorder,
                self.spec.retry,
                self.rng,
                earlier=earlier,
                may_requeue=tries < self.errors.retry_on_error,
            )
            if result.state == "requeued":
                # retry_on_error: to the back of the queue, its errored attempts kept
                if sandboxes is not None:  # removed under the trial (a parent verify accepts)
                    with recorder.scope(recorder.root):
                        await sandboxes.close()
                self.queue.later.append(Requeued(trial, recorder, result.attempts, tries + 1))
                return
            bundle = bundle_of(result, recorder, record["expected"])
            self.retries += max(0, len(bundle["attempts"]) - 1)
            line, digest = seal_bundle(bundle)
            self.writer.write_bundle(line)
            output = result.outcome.output if result.outcome is not None else None
            # a grader sampling at temperature > 0 gets a cache entry per epoch, as solvers
            # do; scorers see the sandboxes the solver left, which go once they are done
            judging = judge(
                bundle, output, self.scorers, self.metrics, self.rows, self.task_metrics, self.raw
            )
            with recorder.scoring_phase(), epoch_scope(trial.repetition):
                if sandboxes is None:  # no binding to make per trial
                    records = await judging
                else:
                    with bound(sandboxes):
                        records = await judging
                    await sandboxes.close()
        if self.ahead is not None and self.rows.kept_last:  # the report lists it
            self.ahead.offer(line)
        record_scores(self.writer, recorder, digest, records)
        if self.monitor is not None:  # a sequential gate
            self.observe(trial.index, trial.target_id, bundle["state"], records)
        if self.hooks is not None:
            await self.hooks.emit(
                "on_sample_end", sample_end(self.spec.evaluation, trial, bundle, records)
            )
        self.after_trial(result.outcome)

    def after_trial(self, outcome: TargetOutcome | None) -> None:
        """What every finished trial ends with, on either path (``_lean`` too): its
        error counted, the evidence pushed to the OS when due, the sink checked."""
        if outcome is not None and outcome.kind == "error":
            self.errors.add_error(outcome.failure)
        if (now := time.monotonic()) - self.flushed > FLUSH_EVERY:
            # Bounded loss on kill -9: at most FLUSH_EVERY seconds of finished trials.
            self.writer.flush()
            self.flushed = now
        if self.http is not None:
            self.http.check()

    async def flush_forever(self) -> None:
        """Push finished trials to disk every FLUSH_EVERY seconds, even while every
        trial still in flight is slow (so kill -9 loses at most that much)."""
        while True:
            await anyio.sleep(FLUSH_EVERY)
            self.writer.flush()
            self.flushed = time.monotonic()

    def observe(self, index: int, target_id: str, state: str, records: list[Any]) -> None:
        """Feed a finished trial to the sequential gate; record the looks it completes,
        and stop handing out trials once a look has decided every check."""
        if self.monitor is None:
            return
        statuses = {r["scorer_id"]: r["status"] for r in records}
        looks = self.monitor.add(index, target_id, state, statuses)
        for look in looks:  # several at once when a slow trial held the front of the plan
            self.run_event("look", look_event(look))
        if looks and self.monitor.stopped:  # only the last look can have stopped the run
            self.run_event("stopped", {"samples": looks[-1].samples, "reason": STOPPED})
            self.queue.stop()


def record_scores(
    writer: RunWriter, recorder: TrialRecorder, digest: str, records: list[dict[str, Any]]
) -> None:
    """Write a trial's score lines, each bound by its ``match`` event (a finished trial's,
    or those a crash lost after their bundle)."""
    for score in records:
        record_score(writer, recorder, digest, score)


def record_score(
    writer: RunWriter, recorder: TrialRecorder, digest: str, score: dict[str, Any]
) -> None:
    """Write one score line and its ``match`` event, which binds the line's exact bytes
    (``record_scores``' step; the lean path's one score of an answer-judged trial)."""
    line = writer.write_score(score)
    recorder.match(score["scorer_id"], score["status"], digest, sha256(line).hexdigest())
