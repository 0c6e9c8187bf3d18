"""``eval_set`` and ``eval_retry``: run a set of tasks × models into one folder until
every unit is complete, picking up where an earlier call left off.

A unit is known again by its spec digest, which covers the task, its arguments, the
samples selected, the model and its settings: a run in the folder with the same digest
is the same unit. Complete and clean, it is skipped (its sealed report is its result);
unfinished and clean (interrupted, crashed), it is resumed in place, keeping the trials
it finished; holding errored trials or scores, it is left as the record of that attempt
and the unit runs again in a new directory (a resume keeps errored trials, so it could
never make that run clean); absent, it is run. Units not yet successful are tried again,
up to ``retry_attempts`` more times, so a set whose errors were transient ends complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import msgspec

from assay.errors import AssayError, ConfigError, Interrupted
from assay.model import Model, ResponseCache, cache_scope, load_prices, price_scope, prices_from_env
from assay.pipeline._conclude import RunStopped
from assay.pipeline._eval import (
    Place,
    Placement,
    TaskInput,
    Unit,
    _resolve_tasks,
    _run_name,
    _run_unit,
)
from assay.pipeline._eval_models import unit_models
from assay.pipeline._eval_options import EvalOptions, eval_options
from assay.pipeline._eval_result import (
    EvalResult,
    completed_result,
    outcome_result,
    scorer_errors,
)
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared
from assay.pipeline._resume import resume_run_async
from assay.pipeline._sync import synchronous
from assay.run import first_error

DEFAULT_RETRY_ATTEMPTS = 10
"""Inspect's default: a unit is tried up to ten more times."""


async def eval_set_async(
    tasks: TaskInput,
    log_dir: str | Path,
    retry_attempts: int = DEFAULT_RETRY_ATTEMPTS,
    *,
    retry_wait: float = 0,
    retry_cleanup: bool = False,
    model: str | Model | Sequence[str | Model] | None = None,
    **options: Any,
) -> tuple[bool, list[EvalResult]]:
    """Run every task × model unit into *log_dir* until each is complete; return whether
    all succeeded and one result per unit, in input order (as Inspect's ``eval_set``,
    whose positional order this keeps: tasks, log_dir, retry_attempts).

    Units whose run in *log_dir* is already complete are not run (their result has
    ``attempts`` 0); unfinished ones are resumed. Units still not successful are tried
    again up to *retry_attempts* times, *retry_wait* seconds after each round.
    *retry_cleanup* removes the errored runs of a unit once it succeeds (off by
    default: they are the evidence of what went wrong). Other options are ``eval``'s,
    except ``output`` and ``task_retries`` (one folder, and retrying is this call's job).
    """
    _check_set_options(options, retry_attempts, retry_wait)
    opts = eval_options({**options, "log_dir": Path(log_dir)})
    cache = ResponseCache(expiry=opts.cache_expiry).open() if opts.cache else None
    prices = load_prices(opts.prices) if opts.prices is not None else prices_from_env()
    with cache_scope(cache), price_scope(prices):
        units = [
            (t, r, m) for t, r in _resolve_tasks(tasks, opts) for m in unit_models(model, t, opts)
        ]
        results: list[EvalResult | None] = [None] * len(units)
        pending = list(range(len(units)))
        for attempt in range(1, retry_attempts + 2):
            if attempt > 1 and retry_wait:
                await anyio.sleep(retry_wait)
            await _run_units(units, pending, results, opts, attempt)
            pending = [i for i, r in enumerate(results) if r is None or r.status != "success"]
            if not pending:
                break
    done = [r for r in results if r is not None]
    if retry_cleanup:
        _remove_errored_runs(opts.log_dir, done)
    return all(r.status == "success" for r in done), done


def _check_set_options(options: dict[str, Any], retry_attempts: int, retry_wait: float) -> None:
    """Refuse what ``eval_set`` does itself, or does not do, in one line each."""
    for name in ("output", "task_retries"):
        if name in options:
            reason = "eval_set writes every unit into log_dir and retries them itself"
            raise ConfigError("task.option", option=f"eval_set({name}=...)", reason=reason)
    if "retry_connections" in options:
        reason = "not supported: set max_connections (a model that rate-limits gets fewer)"
        raise ConfigError("task.option", option="eval_set(retry_connections=...)", reason=reason)
    if retry_attempts < 0:
        reason = "a number of retries: 0 or more"
        raise ConfigError("task.option", option="eval_set(retry_attempts=...)", reason=reason)
    if retry_wait < 0:
        reason = "seconds to wait before each retry: 0 or more"
        raise ConfigError("task.option", option="eval_set(retry_wait=...)", reason=reason)


def _remove_errored_runs(log_dir: Path, results: list[EvalResult]) -> None:
    """Remove the errored runs of each unit that ended in a successful run."""
    import shutil

    done = {r.path for r in results if r.status == "success" and r.path is not None}
    for runs in earlier_runs(log_dir).values():
        if any(run.path in done for run in runs):
            for run in runs:
                if not run.clean and run.path not in done:
                    shutil.rmtree(run.path)


async def _run_units(
    units: list[Unit],
    pending: list[int],
    results: list[EvalResult | None],
    opts: EvalOptions,
    attempt: int,
) -> None:
    """Run the *pending* units, at most ``max_tasks`` at once, each into the run of its
    spec in ``log_dir`` if there is one; a unit's ``attempts`` counts the calls that ran
    it (0: it was complete before this call)."""
    gate = anyio.CapacityLimiter(max(1, opts.max_tasks))
    earlier = earlier_runs(opts.log_dir)

    async def run_one(index: int) -> None:
        task, record, model = units[index]
        async with gate:
            result = await _run_unit(task, record, model, opts, _reuse(earlier, opts, model))
        previous = results[index]
        if result.attempts:  # it ran now: count this try and those before it
            result.attempts = attempt if previous is None else previous.attempts + 1
        results[index] = result

    try:
        async with anyio.create_task_group() as group:
            for index in pending:
                group.start_soon(run_one, index)
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None


class EarlierRun(msgspec.Struct, frozen=True):
    """A run already in the folder: where, whether it is complete, and whether any of
    its trials or scores ended in an error (``clean`` when none did)."""

    path: Path
    started_at: float
    complete: bool
    clean: bool


def _reuse(earlier: dict[str, list[EarlierRun]], opts: EvalOptions, model: Model) -> Place:
    """A placement that takes the unit's earlier run when the folder has a usable one:
    complete and clean, it is the result; unfinished and clean, it is resumed (its
    finished trials kept). A run with errored trials is left as the record of that
    attempt, and the unit runs again in a new directory: a resume keeps finished trials,
    errored ones included, so it could never make that run clean."""

    def place(prepared: Prepared) -> Placement:
        runs = [run for run in earlier.get(prepared.spec.digest, []) if run.clean]
        for run in runs:
            if run.complete:
                return Placement(output=run.path, done=True)
        if runs:  # the newest unfinished run of this spec
            return Placement(output=runs[-1].path, resume=True)
        return Placement(output=opts.log_dir / _run_name(prepared.spec.evaluation, model.name))

    return place


def earlier_runs(log_dir: Path) -> dict[str, list[EarlierRun]]:
    """The runs in *log_dir* by spec digest, oldest first; a folder that is not a
    readable run is left out (it is no unit's)."""
    from assay.evidence import read_manifest
    from assay.log._read import has_errors  # deferred: only eval_set reads runs back

    found: dict[str, list[EarlierRun]] = {}
    if not log_dir.is_dir():
        return {}
    for path in sorted(log_dir.iterdir()):
        try:
            manifest = read_manifest(path)
        except (AssayError, OSError):
            continue
        run = EarlierRun(
            path=path,
            started_at=float(manifest.get("started_at") or 0),
            complete=manifest.get("status") == "complete",
            clean=not has_errors(path),
        )
        found.setdefault(str(manifest.get("spec_digest")), []).append(run)
    return {digest: sorted(runs, key=lambda r: r.started_at) for digest, runs in found.items()}


eval_set = synchronous(eval_set_async, "eval_set")


async def eval_retry_async(logs: Any, **options: Any) -> list[EvalResult]:
    """Finish each unfinished run in *logs* in place (Inspect's ``eval_retry``: here the
    same as ``assay resume``), one result per run, in order.

    Options: ``max_samples``, ``cache``, ``cache_expiry``, ``prices``. Each run's task is
    rebuilt from the file it was loaded from; a run whose task was defined in memory
    cannot be, and its result says so (rerun it with ``eval_set`` instead).
    """
    from assay.log._location import log_path

    one = isinstance(logs, str | Path) or not isinstance(logs, Sequence)
    paths = [log_path(logs)] if one else [log_path(log) for log in logs]
    allowed = {"max_samples", "cache", "cache_expiry", "prices"}
    for name in options:
        if name not in allowed:
            reason = "the options are " + ", ".join(sorted(allowed))
            raise ConfigError("task.option", option=f"eval_retry({name}=...)", reason=reason)
    return [await _retry_one(path, **options) for path in paths]


async def _retry_one(
    path: Path,
    max_samples: int = 16,
    cache: bool | None = None,
    cache_expiry: str | float | None = None,
    prices: Path | None = None,
) -> EvalResult:
    """One run resumed; its failure is its result (as ``eval``'s units). A run already
    complete is its own result, as Inspect's ``eval_retry`` of a finished log: nothing
    runs (``attempts`` 0), and trials that errored in it stay errors."""
    task, model = _unit_names(path)
    if _complete(path):
        done = completed_result(task, model, path)
        if done.status == "success" and (kept := _kept_errors(path)) is not None:
            done.status, done.error = "error", kept
        return done
    try:
        outcome = await resume_run_async(
            path,
            RunOptions(output=path, max_concurrency=max_samples),
            cache=cache,
            cache_expiry=cache_expiry,
            prices=prices,
        )
    except Interrupted:
        raise
    except RunStopped as exc:  # stopped again, but judged and reported
        return outcome_result(task, model, exc.outcome, exc.one_line())
    except AssayError as exc:
        return EvalResult(task=task, model=model, status="error", path=path, error=exc.one_line())
    error = outcome.errors.message() or scorer_errors(outcome.report) or _kept_errors(path)
    return outcome_result(task, model, outcome, error)


def _complete(path: Path) -> bool:
    """Whether the run at *path* was sealed complete (unreadable: not; resume says why)."""
    from assay.evidence import read_manifest

    try:
        return read_manifest(path).get("status") == "complete"
    except AssayError:
        return False


def _kept_errors(path: Path) -> str | None:
    """Why a resumed run is still not a success although nothing failed now: a resume
    keeps finished trials, errored ones too (``None`` when it kept none)."""
    from assay.log._read import has_errors

    if not has_errors(path):
        return None
    return (
        "the run keeps trials or scores that errored before this retry (a resume keeps "
        "finished trials); eval_set runs the unit again from scratch"
    )


def _unit_names(path: Path) -> tuple[str, str]:
    """The task and model a run was of, from its spec (empty when it cannot be read)."""
    import msgspec

    try:
        spec = msgspec.json.decode((path / "spec.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return "", ""
    models = [t.get("model") or t.get("id", "") for t in spec.get("targets", [])]
    return str(spec.get("evaluation", "")), ", ".join(str(m) for m in models)


eval_retry = synchronous(eval_retry_async, "eval_retry")
