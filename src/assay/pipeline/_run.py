"""``run``: the whole pipeline, spec → plan → trials → evidence → scores → gate → reports.

Each finished trial is sealed into a bundle, scored and counted at once, so the run keeps
counters and a bounded list of report rows, never the whole result set, in memory. The
same code finishes a resumed run: trials already finished are judged again from their
bundles (cheap, and identical by construction) and only the rest are run.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from assay import __version__
from assay._digest import loads, sha256_hex
from assay.errors import Interrupted, RunError
from assay.evidence import (
    ARTIFACTS,
    BUNDLES,
    MANIFEST_SCHEMA,
    SINK_FALLBACK,
    ArtifactStore,
    HttpSink,
    LineSink,
    PrintSink,
    RunWriter,
    TrialRecorder,
    seal_bundle,
)
from assay.evidence._framed import open_evidence
from assay.gate._sequential import STOPPED, Monitor, SequentialPlan, look_event
from assay.hooks import HookSet, active_hooks
from assay.model import Model, current_cache, epoch_scope, models_built, replay_scope
from assay.model._registry import model_roles_scope
from assay.pipeline._bundle_of import bundle_of
from assay.pipeline._conclude import RunOutcome, conclude, stopped_run
from assay.pipeline._errors import ErrorBudget
from assay.pipeline._hooks import run_end_told, run_start, sample_end, sample_start
from assay.pipeline._judge import judge
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared, close_parts, prepare_spec, targets_on
from assay.pipeline._progress import Progress, report_progress
from assay.pipeline._queue import Requeued, WorkQueue
from assay.pipeline._replay import replay_of_run
from assay.pipeline._reports import remove_reports
from assay.pipeline._sync import synchronous
from assay.pipeline._trial_sandboxes import RunSandboxes, bound
from assay.plan import Plan, Trial, plan
from assay.report import TrialRows
from assay.report._html import warm_up
from assay.run import execute, first_error, run_trial, run_until_signalled
from assay.score import MetricsBuilder, score_id
from assay.spec import LoadedSpec
from assay.target import Target

if TYPE_CHECKING:
    from assay.sandbox._lifecycle import TrialSandboxes

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
        self.hooks = hooks
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
        return (t for t in self.plan if shard is None or shard.holds(t.index, per_sample))

    def recorder(self, trial_id: str) -> TrialRecorder:
        """A recorder for *trial_id*, continuing the numbering of an unfinished earlier try."""
        recorder = self.writer.recorder(trial_id)
        if self.point is not None and trial_id in self.point.orphans:
            usage = self.point.orphan_usage.get(trial_id)
            recorder.resume_after(*self.point.orphans[trial_id], usage)
        return recorder

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
        if self.hooks and not isinstance(item, Requeued):
            await self.hooks.emit("on_sample_start", sample_start(self.spec.evaluation, trial))
        with recorder.bound():
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
            if sandboxes is not None:
                with recorder.bound():
                    await sandboxes.close()
            self.queue.later.append(Requeued(trial, recorder, result.attempts, tries + 1))
            return
        bundle = bundle_of(result, recorder, record["expected"])
        self.retries += max(0, len(bundle["attempts"]) - 1)
        line, digest = seal_bundle(bundle)
        self.writer.write_bundle(line)
        output = result.outcome.output if result.outcome is not None else None
        # a grader sampling at temperature > 0 gets a cache entry per epoch, as solvers do;
        # scorers see the sandboxes the solver left, which go once they are done
        with recorder.bound(), recorder.scoring_phase(), epoch_scope(trial.repetition):
            with bound(sandboxes):
                records, row = await judge(
                    bundle, output, self.scorers, self.metrics, self.task_metrics
                )
            if sandboxes is not None:
                await sandboxes.close()
        record_scores(self.writer, recorder, digest, records)
        self.rows.add(row)
        self.observe(trial.index, trial.target_id, bundle["state"], records)
        if self.hooks:
            await self.hooks.emit(
                "on_sample_end", sample_end(self.spec.evaluation, trial, bundle, records)
            )
        if result.outcome is not None and result.outcome.kind == "error":
            self.errors.add_error(result.outcome.failure)
        if (now := time.monotonic()) - self.flushed > FLUSH_EVERY:
            # Bounded loss on kill -9: at most FLUSH_EVERY seconds of finished trials.
            self.writer.flush()
            self.flushed = now
        if self.http is not None:
            self.http.check()

    def progress(self, *, final: bool = False) -> Progress:
        """How far the run has got (every trial with a report row is finished) and how
        it is going, read off the counters the run keeps for its report anyway."""
        done = self.rows.kept() + self.rows.omitted
        kept = len(self.point.finished) if self.point is not None else 0
        elapsed = time.time() - self.started
        first = next(iter(self.scorers), None)
        rates = {}
        for target_id in self.metrics.states:
            statuses = self.metrics.scores.get((target_id, first or ""))
            if statuses:
                rates[target_id] = (statuses["passed"], sum(statuses.values()))
        errors = self.errors.errored + sum(
            states["blocked"] + states["invalid"] for states in self.metrics.states.values()
        )
        usage = self.rows.usage_total()
        return Progress(
            self.spec.evaluation,
            done,
            self.shard_size,
            elapsed,
            final,
            kept,
            pass_rates=rates,
            errors=errors,
            retries=self.retries,
            tokens=usage.input_tokens + usage.output_tokens,
            cost=usage.cost,
            workers=self.workers() if self.workers is not None else None,
        )

    async def flush_forever(self) -> None:
        """Push finished trials to disk every FLUSH_EVERY seconds, even while every
        trial still in flight is slow (so kill -9 loses at most that much)."""
        while True:
            await anyio.sleep(FLUSH_EVERY)
            self.writer.flush()
            self.flushed = time.monotonic()

    async def judge_finished(self) -> set[str]:
        """On resume: count the finished trials again from their bundles; fill in scores."""
        if self.point is None or self.writer.path is None:
            return set()
        store = ArtifactStore(self.writer.path / ARTIFACTS, write=False)
        # Re-judging finished trials must not ask graders again: answer from the log.
        # A call a crash lost before it was logged is made live, and recorded in the
        # trial's events as its first one was meant to be (so ``assay score`` replays it).
        replay = replay_of_run(self.writer.path, live_fallback=True)
        scored = self.point.scored
        with open_evidence(self.writer.path / BUNDLES) as handle, replay_scope(replay):
            for line in handle:
                bundle = loads(line)
                trial = bundle["trial"]
                trial_id = trial["trial_id"]
                if trial_id not in self.point.finished:
                    continue
                sha = bundle["observation"].get("output")
                output = store.get(sha) if sha else None
                if all(score_id(trial_id, scorer) in scored for scorer in self.scorers):
                    await self.judge_again(bundle, output)  # its grader calls are all logged
                    continue
                recorder = self.writer.recorder(trial_id)
                recorder.last = self.point.last_event[trial_id]
                with recorder.bound(), recorder.scoring_phase(), epoch_scope(trial["repetition"]):
                    records = await self.judge_again(bundle, output)
                missing = [r for r in records if r["score_id"] not in scored]
                record_scores(self.writer, recorder, bundle["digest"], missing)
        return self.point.finished

    async def judge_again(
        self, bundle: dict[str, Any], output: bytes | None
    ) -> list[dict[str, Any]]:
        """Judge a finished trial's bundle, count it and add its row; its score records."""
        records, row = await judge(bundle, output, self.scorers, self.metrics, self.task_metrics)
        self.rows.add(row)
        trial = bundle["trial"]
        self.observe(trial["index"], trial["target_id"], bundle["state"], records)
        return records

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
        line = writer.write_score(score)
        recorder.record("match", _match(score, digest, line), parent=recorder.root)


def _match(score: dict[str, Any], bundle_digest: str, line: bytes) -> dict[str, Any]:
    """The ``match`` event of a score: it binds the score record's exact bytes."""
    return {
        "scorer": score["scorer_id"],
        "status": score["status"],
        "bundle": bundle_digest,
        "record": sha256_hex(line),
    }


async def execute_run(prepared: Prepared, options: RunOptions, *, resume: bool) -> RunOutcome:
    """Run (or finish) *prepared* end to end and write its evidence and reports; every
    model made during it (a user scorer's own grader, say) is closed when it ends.
    Hooks (``assay.hooks``) hear of its end once it is sealed, however it ended."""
    hooks = active_hooks()
    if not hooks:
        return await _execute_in_scope(prepared, options, resume, hooks)
    path = None if options.dry_run or options.output is None else str(options.output)
    async with run_end_told(hooks, prepared.spec.evaluation, path) as told:
        return told(await _execute_in_scope(prepared, options, resume, hooks))


async def _execute_in_scope(
    prepared: Prepared, options: RunOptions, resume: bool, hooks: HookSet
) -> RunOutcome:
    with models_built() as built, model_roles_scope(prepared.model_roles):
        async with targets_on(prepared, options.cluster) as running:
            return await _execute_run(running, options, resume, built, hooks)


async def _execute_run(
    prepared: Prepared, options: RunOptions, resume: bool, built: list[Model], hooks: HookSet
) -> RunOutcome:
    run = _Run(prepared, options, resume=resume, hooks=hooks)
    if not options.dry_run:
        warm_up()  # the report's template, loaded while the trials run
    try:
        # spec.json first: a manifest never exists without the spec it names
        run.writer.write_spec(run.spec.canonical())
        run.writer.write_manifest(run.manifest(run.manifest_fields("running")))
        if resume:
            remove_reports(run.writer.path)
        for trial in run.plan:
            run.writer.write_plan_line(msgspec.structs.asdict(trial))
        run.writer.plan_written()
        finished = await run.judge_finished()
        if run.point is not None:
            run.run_event(
                "run_resumed", {"finished": len(finished), "repaired": run.point.repaired}
            )
        else:
            run.run_event("run_started", {"spec_digest": run.spec.digest})
        if hooks:
            start = run_start(
                run.spec, len(run.plan), run.writer.path, resumed=run.point is not None
            )
            await hooks.emit("on_run_start", start)
        run.queue = WorkQueue(t for t in run.planned() if t.trial_id not in finished)
        if run.monitor is not None and run.monitor.stopped:
            run.queue.stop()  # a resumed run whose finished trials already decide it

        async def work() -> None:
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(run.flush_forever)
                    if options.progress is not None:
                        group.start_soon(report_progress, run.progress, options.progress)
                    await execute(run.queue, run.trial, options.max_concurrency)
                    group.cancel_scope.cancel()
            except BaseExceptionGroup as errors:
                raise first_error(errors) from None
            finally:
                if options.progress is not None:
                    options.progress(run.progress(final=True))

        if not options.handle_signals:
            await work()
        else:
            stopped = Interrupted("run.interrupted", path=str(run.writer.path))
            if await run_until_signalled(work, farewell=f"assay: {stopped.one_line()}"):
                run.seal("interrupted")
                raise stopped
        return conclude(run, "complete")
    except Interrupted:
        raise
    except RunError as exc:
        if exc.key == "run.cluster_lost":  # the one command that finishes it names the run
            exc.params["path"] = str(run.writer.path)
        if exc.key == STORAGE or run.concluding:  # the reports cannot be (re)made
            with contextlib.suppress(OSError, RunError):
                run.seal("interrupted")
            raise
        raise stopped_run(run, exc) from exc
    except OSError as exc:  # the disk filled, the folder vanished, ...: say so, exit 5
        with contextlib.suppress(OSError, RunError):
            run.seal("interrupted")
        raise RunError.storage(run.writer.path, exc) from exc
    except BaseException:
        with anyio.CancelScope(shield=True), contextlib.suppress(OSError, RunError):
            run.seal("interrupted")
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await close_parts([*run.targets.values(), *run.scorers.values(), *built])
        try:
            run.writer.close()
        except OSError as exc:
            raise RunError.storage(run.writer.path, exc) from exc


async def run_spec_async(loaded: LoadedSpec, options: RunOptions) -> RunOutcome:
    """Run *loaded* into a new run directory (or nowhere, with ``dry_run``)."""
    return await execute_run(prepare_spec(loaded), options, resume=False)


run_spec = synchronous(run_spec_async, "run_spec")
