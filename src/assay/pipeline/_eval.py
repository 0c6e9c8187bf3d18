"""``eval``: run Python tasks against models through the one pipeline.

Tasks × models resolve to independent units, each frozen into its own spec and run into
its own directory by the same ``execute_run`` the YAML path uses. Three gates bound the
work: ``max_tasks`` units at once, ``max_samples`` trials in flight per unit, and each
model's ``max_connections``. A unit that fails or is cancelled does not take its
siblings down; its result says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

import anyio
import msgspec

from assay._collector import survivors_frozen
from assay._registry import json_safe
from assay.dataset import Sample, select
from assay.errors import AssayError, ConfigError, Interrupted
from assay.hooks import load_hooks
from assay.model import (
    GenerateConfig,
    Model,
    ResponseCache,
    cache_scope,
    get_price,
    load_prices,
    price_scope,
    prices_from_env,
)
from assay.pipeline._cluster_task import ClusterRefused, ClusterUnreachable
from assay.pipeline._conclude import RunStopped
from assay.pipeline._eval_models import unit_model_args, unit_models
from assay.pipeline._eval_options import EvalOptions, eval_options
from assay.pipeline._eval_result import (
    EvalResult,
    completed_result,
    outcome_result,
    scorer_errors,
)
from assay.pipeline._execute import execute_run
from assay.pipeline._limits_option import with_limits
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared
from assay.pipeline._solver_option import with_solver
from assay.pipeline._sync import synchronous
from assay.pipeline._task_prepare import TaskSettings, prepare_task
from assay.run import first_error
from assay.run._gc import collector_tuned
from assay.task import Task, load_tasks

_CLUSTER_ENDS = ("run.cluster_lost", "run.cluster_other_code")
"""A stopped run's errors that every other unit of the eval would meet too."""


class TaskSource(Protocol):
    """Supplies more tasks while an eval runs; the eval ends when it returns none."""

    async def next_tasks(self) -> list[Task]:
        """Tasks to run next (``[]`` when there are no more)."""
        ...


_enqueued: ContextVar[list[Task] | None] = ContextVar("assay_enqueued", default=None)


def enqueue_task(task: Task) -> None:
    """Add *task* to the eval running in this context; it runs after the current batch."""
    queue = _enqueued.get()
    if queue is None:
        raise RuntimeError("enqueue_task() is only available while assay.eval is running")
    queue.append(task)


TaskInput = Task | str | Callable[..., Task] | Sequence[Task | str | Callable[..., Task]]


async def eval_async(
    tasks: TaskInput,
    model: str | Model | Sequence[str | Model] | None = None,
    *,
    task_source: TaskSource | None = None,
    **options: Any,
) -> list[EvalResult]:
    """Run every task against every model; one result per task × model, in input order.

    Tasks added while it runs (``enqueue_task`` or a *task_source*) run in later batches;
    the eval ends when a batch adds none.
    """
    with collector_tuned(), survivors_frozen():  # the start and end too, not only trials
        return await _eval_async(tasks, model, task_source, options)


async def _eval_async(
    tasks: TaskInput, model: Any, task_source: TaskSource | None, options: dict[str, Any]
) -> list[EvalResult]:
    opts = eval_options(options)
    load_hooks()  # a broken hook plugin stops the eval here, not each unit
    cache = ResponseCache(expiry=opts.cache_expiry).open() if opts.cache else None
    prices = load_prices(opts.prices) if opts.prices is not None else prices_from_env()
    queue: list[Task] = []
    token = _enqueued.set(queue)
    results: list[EvalResult] = []
    try:
        with cache_scope(cache), price_scope(prices):
            batch = _resolve_tasks(tasks, opts)
            while batch:
                results += await _run_batch(batch, model, opts)
                batch = [(task, None) for task in queue]
                queue.clear()
                if task_source is not None:
                    batch += [(task, None) for task in await task_source.next_tasks()]
    finally:
        _enqueued.reset(token)
    return results


async def _run_batch(
    batch: list[tuple[Task, dict[str, Any] | None]],
    model: str | Model | Sequence[str | Model] | None,
    opts: EvalOptions,
) -> list[EvalResult]:
    """Run the task × model units of one batch, at most ``max_tasks`` at once."""
    units: list[Unit | None] = [(t, r, m) for t, r in batch for m in unit_models(model, t, opts)]
    batch.clear()  # the units hold the tasks now (see ``_taken``)
    if opts.output is not None and (len(units) > 1 or opts.task_retries):
        reason = f"one run directory for {len(units)} task × model unit(s)"
        if opts.task_retries:
            reason = "task_retries runs a unit again into a new directory"
        raise ConfigError("eval.output", reason=reason)
    _check_prices(units)
    results: list[EvalResult | None] = [None] * len(units)
    gate = anyio.CapacityLimiter(max(1, opts.max_tasks))

    async def run_unit(index: int) -> None:
        async with gate:
            if not opts.task_retries:  # run once: its run alone holds the task
                results[index] = await _run_unit(*_taken(units, index), opts)
                return
            task, record, resolved = _taken(units, index)
            for attempt in range(1, opts.task_retries + 2):
                result = await _run_unit(task, record, resolved, opts)
                result.attempts = attempt
                if result.status == "success":
                    break
            results[index] = result

    try:
        async with anyio.create_task_group() as group:
            for index in range(len(units)):
                group.start_soon(run_unit, index)
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None  # e.g. Interrupted: one error, not a group
    return [r for r in results if r is not None]


eval = synchronous(eval_async, "eval")

Unit = tuple[Task, dict[str, Any] | None, Model]


def _check_prices(units: list[Unit | None]) -> None:
    """A cost limit needs a price: say so before any unit runs."""
    for task, _, model in filter(None, units):
        if task.limits.cost_limit is not None and get_price(model.name) is None:
            raise ConfigError("prices.missing", model=model.name)


def _taken(units: list[Unit | None], index: int) -> Unit:
    """Unit *index*, no longer held by *units*.

    A task the eval built itself (a file or an ``@task`` function) is then held by its
    unit's run alone, which lets go of it once its samples are frozen: a 100,000-sample
    dataset built in Python (~33 MiB of ``Sample`` objects) is not kept for the length of
    the run, since the run reads its samples from the frozen copy.
    """
    unit = units[index]
    units[index] = None
    assert unit is not None  # each unit is taken once
    return unit


class Placement(msgspec.Struct, frozen=True):
    """Where a unit runs: a new run directory, or an earlier one of the same spec that
    is resumed (``resume``) or already complete (``done``: nothing is run)."""

    output: Path
    resume: bool = False
    done: bool = False


Place = Callable[[Prepared], Placement]
"""Chooses a unit's run directory once its spec (so its digest) is known."""


async def _run_unit(
    task: Task,
    record: dict[str, Any] | None,
    model: Model,
    opts: EvalOptions,
    place: Place | None = None,
) -> EvalResult:
    """One unit in its own cancel scope; its failure is its result, not its siblings'.

    *place* chooses its directory (``eval_set`` reuses earlier runs of the same spec);
    by default a new one. An interrupt (Ctrl-C) is not a unit's failure: it propagates,
    so the whole eval stops.
    """
    output: Path | None = None
    name = task.name
    try:
        epochs = task.epochs
        if opts.epochs is not None:  # the caller's Task is left as it was
            epochs = msgspec.structs.replace(task.epochs, epochs=opts.epochs)
        fail_on_error = opts.fail_on_error if opts.fail_on_error is not None else task.fail_on_error
        settings = TaskSettings(
            score_on_error=opts.score_on_error,
            retry_on_error=opts.retry_on_error,
            fail_on_error=fail_on_error,
            continue_on_fail=opts.continue_on_fail,
            gate_minimum=opts.gate_minimum,
            max_attempts=opts.max_attempts,
        )
        task, solver = with_solver(task, opts.solver, opts.solver_args)
        task = with_limits(task, opts.sample_limits)
        if record is not None:  # what a resume needs to select and build the same unit
            record = {
                **record,
                "select": {"limit": opts.limit, "sample_id": opts.sample_id},
                "model_args": json_safe(unit_model_args(opts)),
                "endpoint": model.endpoint,  # resume refuses another one
            }
            if opts.generate_config != GenerateConfig():
                record["config"] = msgspec.to_builtins(opts.generate_config)
            if solver is not None:
                record["solver"] = solver
            if opts.sample_limits:
                record["limits"] = opts.sample_limits
        samples = _select(task, opts)
        prepared = prepare_task(
            task,
            model,
            samples,
            settings,
            record,
            epochs=epochs,
            config=opts.generate_config,
            model_roles=opts.model_roles,
            model_args=unit_model_args(opts),
            approval=opts.approval,
        )
        del task, samples  # frozen into *prepared*: the caller's own Task stays the caller's
        placement = (place or _new_directory(opts, model))(prepared)
        output = placement.output
        if placement.done:
            return completed_result(name, model.name, output)
        run_options = RunOptions(
            output=output,
            max_concurrency=opts.max_samples,
            handle_signals=opts.handle_signals,
            progress=opts.progress,
            max_sandboxes=opts.max_sandboxes,
            sandbox_cleanup=opts.sandbox_cleanup,
            cluster=opts.cluster,
        )
        with anyio.CancelScope():
            outcome = await execute_run(prepared, run_options, resume=placement.resume)
        error = outcome.errors.message() or scorer_errors(outcome.report)
        return outcome_result(name, model.name, outcome, error)
    except (Interrupted, ClusterRefused, ClusterUnreachable):  # the eval stops (exit 2, 5)
        raise
    except RunStopped as exc:  # stopped, but judged and reported: its gate says ``stopped``
        if exc.key in _CLUSTER_ENDS:  # every unit would be: the eval stops (exit 5)
            raise  # with the one line naming ``assay resume RUN --cluster ADDRESS``
        return outcome_result(name, model.name, exc.outcome, exc.one_line())
    except AssayError as exc:  # before its run (no folder yet), the error's own exit code
        path = output if output is not None and output.exists() else None
        return EvalResult(
            task=name,
            model=model.name,
            status="error",
            path=path,
            error=exc.one_line(),
            exit_code=exc.exit_code if output is None else None,
        )


def _new_directory(opts: EvalOptions, model: Model) -> Place:
    """The default placement: ``output``, else a new directory in ``log_dir``."""

    def place(prepared: Prepared) -> Placement:
        name = _run_name(prepared.spec.evaluation, model.name)
        return Placement(output=opts.output or opts.log_dir / name)

    return place


def _run_name(evaluation: str, model: str) -> str:
    """``<task>-<model>-<UTC time>-<µs>``: unique even for units started together."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{evaluation}-{model.replace('/', '-')}-{stamp}-{time.time_ns() // 1000 % 10**6:06d}"


def _resolve_tasks(tasks: TaskInput, opts: EvalOptions) -> list[tuple[Task, dict[str, Any] | None]]:
    items: list[Any] = [tasks] if isinstance(tasks, Task | str) or callable(tasks) else list(tasks)
    resolved: list[tuple[Task, dict[str, Any] | None]] = []
    for item in items:
        if isinstance(item, str):
            resolved.extend(load_tasks(item, opts.task_args))
        elif isinstance(item, Task):
            resolved.append((item, None))
        else:  # an @task function, called with the eval's task_args
            resolved.append((item(**opts.task_args), None))
    return resolved


def _select(task: Task, opts: EvalOptions) -> Sequence[Sample]:
    """Apply ``limit`` and ``sample_id`` (ids 1..n are assigned first where missing).

    A view, not a list: samples are read one at a time when the dataset is frozen.
    """
    return select(task.dataset, limit=opts.limit, sample_id=opts.sample_id)
