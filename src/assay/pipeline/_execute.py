"""``execute_run``: one run from its spec to its sealed evidence, however it ends.

The order of the files (spec, manifest ``running``, plan, then the trials), the resume's
re-judging, hooks, signals and every way a run can stop are handled here; what a run
keeps and does per trial is ``_Run``'s (``_run.py``).
"""

from __future__ import annotations

import contextlib
from functools import partial

import anyio

from assay._collector import freeze_survivors, survivors_frozen
from assay.errors import Interrupted, RunError
from assay.hooks import HookSet, active_hooks
from assay.model import Model, models_built
from assay.model._registry import model_roles_scope
from assay.pipeline._ahead import details_ahead, work_ahead
from assay.pipeline._conclude import RunOutcome, conclude, stopped_run
from assay.pipeline._hooks import run_end_told, run_start
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared, close_parts, prepare_spec, targets_on
from assay.pipeline._progress import progress_of, report_progress
from assay.pipeline._rejudge import judge_finished
from assay.pipeline._reports import remove_reports
from assay.pipeline._run import STORAGE, _Run
from assay.pipeline._sync import synchronous
from assay.run import execute, first_error, run_until_signalled
from assay.run._gc import collector_tuned
from assay.spec import LoadedSpec

_NAMES_THE_RUN = ("run.cluster_lost", "run.cluster_other_code", "run.program_crash_loop")
"""Errors whose hint is the command that finishes the run: its folder is filled in here."""


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
    ahead = details_ahead(run)
    try:
        # spec.json first: a manifest never exists without the spec it names
        run.writer.write_spec(run.spec.canonical())
        run.writer.write_manifest(run.manifest(run.manifest_fields("running")))
        if resume:
            remove_reports(run.writer.path)
        run.writer.write_plan(run.plan)
        run.writer.plan_written()
        finished = await judge_finished(run)
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
        pending = run.planned()
        if finished:  # a resumed run: its finished trials were judged again above
            pending = (t for t in pending if t.trial_id not in finished)
        items, runner = run.work(pending)
        freeze_survivors()  # the start's objects (plan, dataset, modules) live on

        async def work() -> None:
            try:
                ramped = anyio.Event()
                async with anyio.create_task_group() as group:
                    group.start_soon(run.flush_forever)
                    if not options.dry_run:
                        group.start_soon(work_ahead, run, ahead, ramped)
                    if options.progress is not None:
                        group.start_soon(
                            report_progress, partial(progress_of, run), options.progress
                        )
                    await execute(items, runner, options.max_concurrency, ramped.set)
                    group.cancel_scope.cancel()
            except BaseExceptionGroup as errors:
                raise first_error(errors) from None
            finally:
                if options.progress is not None:
                    options.progress(progress_of(run, final=True))

        if not options.handle_signals:
            await work()
        else:
            stopped = Interrupted("run.interrupted", path=str(run.writer.path))
            if await run_until_signalled(work, farewell=f"assay: {stopped.one_line()}"):
                run.seal("interrupted")
                raise stopped
        return conclude(run, "complete", ahead=ahead)
    except Interrupted:
        raise
    except RunError as exc:
        if exc.key in _NAMES_THE_RUN:  # the one command that finishes it names the run
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
    with collector_tuned(), survivors_frozen():  # the start and end too, not only trials
        return await execute_run(prepare_spec(loaded), options, resume=False)


run_spec = synchronous(run_spec_async, "run_spec")
