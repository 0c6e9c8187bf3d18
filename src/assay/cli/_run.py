"""``assay run SPEC`` and ``assay resume RUN``: run an evaluation end to end, or finish one."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from assay._messages import say
from assay.cli._ci import check_junit_path, junit_option, write_ci_outputs
from assay.cli._generate import GENERATE_NAMES, generate_options, given_settings
from assay.cli._print import print_decision, print_usage
from assay.cli._progress import progress_line
from assay.cli._sign import sign_after_run
from assay.errors import ConfigError
from assay.model import DEFAULT_EXPIRY

if TYPE_CHECKING:
    from assay.pipeline import RunOutcome
    from assay.plan import Shard
    from assay.spec import EvalSpec

F = TypeVar("F", bound=Callable[..., Any])


baseline_option = click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Baseline run for the spec's no_regression gate (overrides the spec's baseline).",
)


def execution_options(func: F) -> F:
    """The options ``run`` and ``resume`` share, declared once."""
    options = [
        click.option(
            "--max-concurrency",
            "--max-samples",
            "-j",
            type=click.IntRange(1, 10_000),
            default=16,
            show_default=True,
            help="Trials in flight at once (--max-samples, as Inspect names it).",
        ),
        click.option("--sink", "sink_url", help="Also post event batches to this HTTP URL."),
        click.option(
            "--sink-max-failure-rate",
            type=click.FloatRange(0, 1),
            default=0.5,
            show_default=True,
            help="Stop the run once more than this share of sink batches has failed.",
        ),
        baseline_option,
        junit_option,
        click.option(
            "--progress/--no-progress",
            default=None,
            help="Show how many trials are done on stderr [default: on a terminal only].",
        ),
        click.option(
            "--cluster",
            metavar="ADDRESS",
            help="Run the targets' calls on this Dask scheduler's workers (tcp://host:8786); "
            "the trials and their evidence stay here.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


prices_option = click.option(
    "--prices",
    type=click.Path(path_type=Path),
    envvar="ASSAY_PRICES",
    help="Price file (YAML/JSON, USD per million tokens) [env: ASSAY_PRICES].",
)
"""``--prices``, declared once for ``run`` and ``resume`` (a resume prices its new calls,
and re-checks a cost_limit's frozen price, with the same table as the run)."""


def cache_options(func: F) -> F:
    """``--cache/--no-cache`` and ``--cache-expiry``, declared once for ``run`` and
    ``resume``. Unset (``None``), ``run`` goes without the cache and ``resume`` does what
    the run did (its manifest says whether it used the cache, and the expiry)."""
    options = [
        click.option(
            "--cache/--no-cache",
            default=None,
            help="Answer model calls from the response cache [run: off; resume: as the run did].",
        ),
        click.option(
            "--cache-expiry",
            help="How long new cache entries stay fresh: 30m, 12h, 7d, 2w or never "
            "[run: 7d; resume: the run's].",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


if TYPE_CHECKING:  # click >= 8.2 types ParamType by its value; 8.1 is not generic
    _LimitType = click.ParamType[int | tuple[int, int], object]
else:
    _LimitType = click.ParamType


class SampleLimit(_LimitType):
    """``--limit N`` (the first N samples) or ``--limit A-B`` (samples A to B, 1-based and
    inclusive, as Inspect reads it): an int, or the 0-based ``(start, stop)`` slice."""

    name = "N|A-B"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | tuple[int, int]:
        if isinstance(value, int | tuple):
            return value
        first, dash, last = str(value).strip().partition("-")
        if first.isdigit() and (not dash or last.isdigit()):
            start, stop = int(first), int(last) if dash else None
            if stop is None and start >= 1:
                return start
            if stop is not None and 1 <= start <= stop:
                return (start - 1, stop)
        self.fail(
            f"{value!r} is neither a count N >= 1 nor a range A-B with 1 <= A <= B "
            "(e.g. --limit 10 or --limit 10-20)",
            param,
            ctx,
        )


PYTHON_ONLY = (
    "models",
    "task_args",
    "model_args",
    "model_roles",
    "model_base_url",
    "solver",
    "solver_args",
    "epochs",
    "limit",
    "sample_ids",
    "log_dir",
    "max_tasks",
    "max_connections",
    "retry_on_error",
    "score_on_error",
    *GENERATE_NAMES,
)
"""``run``'s options that only a Python task can use (a YAML spec's targets are programs
and endpoints, its samples and repetitions are the spec's): given with a YAML spec they
are refused rather than ignored."""


def parse_roles(values: tuple[str, ...]) -> dict[str, str]:
    """``--model-role grader=openai/gpt-4o`` values as ``{"grader": "openai/gpt-4o"}``."""
    roles: dict[str, str] = {}
    for value in values:
        role, sep, model = value.partition("=")
        if not (sep and role.strip() and "/" in model):
            raise ConfigError("model.role_value", value=value)
        roles[role.strip()] = model.strip()
    return roles


def _refuse_python_only_options(context: click.Context) -> None:
    """A ConfigError naming the first Python-only option given on the command line."""
    for param in context.command.params:
        if param.name not in PYTHON_ONLY:
            continue
        source = context.get_parameter_source(param.name)
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            raise ConfigError("task.python_only", option=max(param.opts, key=len))


SIGN_OPTION = click.option(
    "--sign",
    "sign_key",
    metavar="KEY",
    type=click.Path(path_type=Path),
    help="Sign the run with this Ed25519 private key (PEM) as soon as it is sealed.",
)
"""``--sign KEY`` of ``run`` and ``resume``, declared once."""


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Run directory to create.")
@click.option("--dry-run", is_flag=True, help="Run and print events; write nothing.")
@click.option("--model", "-m", "models", multiple=True, help="Model(s) for Python tasks.")
@click.option("-T", "task_args", multiple=True, help="Task argument key=value (Python tasks).")
@click.option("-M", "model_args", multiple=True, help="Model argument key=value.")
@click.option(
    "--model-role",
    "model_roles",
    multiple=True,
    metavar="ROLE=MODEL",
    help="Bind a model to a role, e.g. grader=openai/gpt-4o (Python tasks).",
)
@click.option(
    "--model-base-url",
    help="Server of the models (OpenAI-compatible), e.g. http://127.0.0.1:8080/v1.",
)
@click.option("--solver", help="Run this registered solver instead of the tasks' own.")
@click.option("-S", "solver_args", multiple=True, help="Solver argument key=value (--solver).")
@click.option("--epochs", type=click.IntRange(1), help="Override the tasks' epochs.")
@click.option(
    "--limit",
    type=SampleLimit(),
    help="Run only the first N samples, or samples A to B (1-based, inclusive: 10-20).",
)
@click.option("--sample-id", "sample_ids", multiple=True, help="Run only these sample ids.")
@click.option("--log-dir", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
@click.option("--max-tasks", type=click.IntRange(1), default=1, show_default=True)
@click.option("--max-connections", type=click.IntRange(1), help="Calls in flight per model.")
@click.option("--retry-on-error", type=click.IntRange(0), default=0, show_default=True)
@click.option("--score-on-error", is_flag=True, help="Score errored samples on their last state.")
@click.option("--max-sandboxes", type=click.IntRange(1), help="Samples holding sandboxes at once.")
@click.option(
    "--no-sandbox-cleanup",
    "keep_sandboxes",
    is_flag=True,
    help="Keep every sample's sandbox for debugging; print where each is.",
)
@click.option(
    "--shard",
    metavar="K/N",
    help="Run only part K of N of the plan (whole samples, round robin); join the parts "
    "with 'assay merge' (YAML specs).",
)
@generate_options
@SIGN_OPTION
@cache_options
@prices_option
@execution_options
@click.pass_context
def run(
    context: click.Context,
    /,
    spec: Path,
    output: Path | None,
    dry_run: bool,
    models: tuple[str, ...],
    task_args: tuple[str, ...],
    model_args: tuple[str, ...],
    model_roles: tuple[str, ...],
    model_base_url: str | None,
    solver: str | None,
    solver_args: tuple[str, ...],
    epochs: int | None,
    limit: int | tuple[int, int] | None,
    sample_ids: tuple[str, ...],
    log_dir: Path,
    max_tasks: int,
    max_connections: int | None,
    retry_on_error: int,
    score_on_error: bool,
    max_sandboxes: int | None,
    keep_sandboxes: bool,
    cache: bool | None,
    cache_expiry: str | None,
    prices: Path | None,
    sign_key: Path | None,
    shard: str | None,
    **execution: Any,
) -> None:
    """Run SPEC: a YAML spec, or Python tasks as file.py or file.py@task."""
    from assay.pipeline import RunOptions, RunStopped, check_baseline_option, run_spec
    from assay.spec import load_spec

    _check_sign_key(sign_key, dry_run)
    junit = execution.pop("junit")
    check_junit_path(junit)
    if spec.suffix == ".py" or ".py@" in str(spec):
        from assay.cli._tasks import parse_assignments, run_tasks

        if execution["baseline"] is not None:
            reason = "a baseline is for YAML specs with a gate.no_regression policy"
            raise ConfigError("spec.shape", path="--baseline", reason=reason)
        written = "is for YAML specs; a Python task's run is written to its directory"
        for given, option, reason in (
            (dry_run, "--dry-run", written),
            (execution["sink_url"], "--sink", written),
            (shard, "--shard", "sharded runs are for YAML specs"),
        ):
            if given:
                raise ConfigError("task.option", option=option, reason=reason)

        options: dict[str, Any] = {
            "task_args": parse_assignments(task_args, "-T"),
            "model_args": parse_assignments(model_args, "-M"),
            "model_roles": parse_roles(model_roles),
            "model_base_url": model_base_url,
            "solver": solver,
            "solver_args": parse_assignments(solver_args, "-S"),
            "epochs": epochs,
            "limit": limit,
            "sample_id": list(sample_ids) or None,
            "log_dir": log_dir,
            "output": output,
            "max_tasks": max_tasks,
            "max_samples": execution["max_concurrency"],
            "max_connections": max_connections,
            "retry_on_error": retry_on_error,
            "score_on_error": score_on_error,
            "max_sandboxes": max_sandboxes,
            "sandbox_cleanup": not keep_sandboxes,
            "cache": bool(cache),
            "cache_expiry": cache_expiry or DEFAULT_EXPIRY,
            "prices": prices,
            "progress": progress_line(execution["progress"]),
            "cluster": execution["cluster"],
        }
        options.update(given_settings(context))
        run_tasks(str(spec), models, options, sign_key, junit)

    _refuse_python_only_options(context)
    if cache:  # a YAML spec's targets are programs and endpoints, not assay models
        reason = "the response cache is for Python tasks (file.py or file.py@task)"
        raise ConfigError("task.option", option="--cache", reason=reason)
    for given, option in (
        (max_sandboxes, "--max-sandboxes"),
        (keep_sandboxes, "--no-sandbox-cleanup"),
    ):
        if given:
            reason = "sample sandboxes are for Python tasks (file.py or file.py@task)"
            raise ConfigError("task.option", option=option, reason=reason)
    loaded = load_spec(spec)
    part = _shard_of(shard, loaded.spec)
    _check_sink(execution["sink_url"])
    check_baseline_option(loaded.spec, execution["baseline"])
    if output is None and not dry_run:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        output = Path("runs") / f"{loaded.spec.evaluation}-{stamp}"
    wanted = execution.pop("progress")  # a dry run's events go to the terminal already
    progress = progress_line(False if dry_run and wanted is None else wanted)
    run_options = RunOptions(
        output=output,
        dry_run=dry_run,
        handle_signals=True,
        progress=progress,
        shard=part,
        **execution,
    )
    try:
        outcome = run_spec(loaded, run_options)
    except RunStopped as stopped:  # judged and reported: show it, then the one-line error
        _print_outcome(stopped.outcome)
        sign_after_run(stopped.outcome.path, sign_key)  # sealed as interrupted: signable
        write_ci_outputs([stopped.outcome.report], junit)
        raise
    sign_after_run(outcome.path, sign_key)
    code = print_decision(outcome.metrics, outcome.gate, [s.id for s in loaded.spec.scorers])
    print_usage(outcome.report)
    write_ci_outputs([outcome.report], junit)
    click.echo(say("out.dry_run") if dry_run else say("out.run_dir", path=outcome.path))
    raise SystemExit(code)


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option(
    "--spec",
    "spec_path",
    type=click.Path(path_type=Path),
    help="The spec, if it moved since the run started (must be unchanged).",
)
@SIGN_OPTION
@cache_options
@prices_option
@execution_options
def resume(
    run_dir: Path,
    spec_path: Path | None,
    sign_key: Path | None,
    cache: bool | None,
    cache_expiry: str | None,
    prices: Path | None,
    **execution: Any,
) -> None:
    """Finish an interrupted run in RUN: keep finished trials, run the rest."""
    from assay.pipeline import RunOptions, RunStopped, resume_run

    _check_sink(execution["sink_url"])
    _check_sign_key(sign_key, False)
    junit = execution.pop("junit")
    check_junit_path(junit)
    progress = progress_line(execution.pop("progress"))
    options = RunOptions(output=run_dir, handle_signals=True, progress=progress, **execution)
    try:
        outcome = resume_run(
            run_dir, options, spec_path, cache=cache, cache_expiry=cache_expiry, prices=prices
        )
    except RunStopped as stopped:
        _print_outcome(stopped.outcome)
        sign_after_run(stopped.outcome.path, sign_key)
        write_ci_outputs([stopped.outcome.report], junit)
        raise
    sign_after_run(outcome.path, sign_key)
    code = _print_outcome(outcome)
    write_ci_outputs([outcome.report], junit)
    raise SystemExit(code)


def _print_outcome(outcome: RunOutcome) -> int:
    """Print a run's decision, usage and folder; return the decision's exit code."""
    code = print_decision(outcome.metrics, outcome.gate, outcome.report.scorers)
    print_usage(outcome.report)
    done = say("out.dry_run") if outcome.path is None else say("out.run_dir", path=outcome.path)
    click.echo(done)
    return code


def _shard_of(text: str | None, spec: EvalSpec) -> Shard | None:
    """``--shard K/N`` as a Shard, refused (exit 2) when malformed or when the spec's gate
    is sequential: its looks take the plan in order, which no part of it has."""
    if text is None:
        return None
    from assay.plan import parse_shard

    shard = parse_shard(text)
    if shard is None:
        reason = f"{text!r} is not K/N with 1 <= K <= N (e.g. --shard 2/4)"
        raise ConfigError("task.option", option="--shard", reason=reason)
    if spec.gate.stopping is not None:
        reason = "a sequential gate (gate.sequential) looks at the whole plan in order"
        raise ConfigError("task.option", option="--shard", reason=reason)
    return shard


def _check_sign_key(path: Path | None, dry_run: bool) -> None:
    """``--sign KEY``: a key that cannot sign is refused before any trial runs."""
    if path is None:
        return
    if dry_run:
        reason = "a dry run writes no run to sign"
        raise ConfigError("task.option", option="--sign", reason=reason)
    from assay.evidence._attest import load_private_key

    load_private_key(path)


def _check_sink(url: str | None) -> None:
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError("spec.shape", path="--sink", reason="the sink must be an http(s) URL")
