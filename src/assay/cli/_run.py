"""``assay run SPEC`` and ``assay resume RUN``: run an evaluation end to end, or finish one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay._messages import say
from assay.cli._ci import check_junit_path, write_ci_outputs
from assay.cli._generate import generate_options, given_settings
from assay.cli._print import print_decision, print_usage
from assay.cli._progress import progress_line
from assay.cli._run_options import (
    EXECUTION_NAMES,
    SIGN_OPTION,
    cache_options,
    eval_options,
    execution_options,
    prices_option,
    python_task_options,
    refuse_python_only_options,
)
from assay.cli._sign import sign_after_run
from assay.errors import ConfigError
from assay.model import DEFAULT_EXPIRY

if TYPE_CHECKING:
    from assay.pipeline import RunOutcome
    from assay.plan import Shard
    from assay.spec import EvalSpec


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Run directory to create.")
@click.option("--dry-run", is_flag=True, help="Run and print events; write nothing.")
@python_task_options
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
    max_sandboxes: int | None,
    keep_sandboxes: bool,
    cache: bool | None,
    cache_expiry: str | None,
    prices: Path | None,
    sign_key: Path | None,
    shard: str | None,
    **params: Any,
) -> None:
    """Run SPEC: a YAML spec, or Python tasks as file.py or file.py@task."""
    from assay.pipeline import RunOptions, RunStopped, check_baseline_option, run_spec
    from assay.spec import load_spec

    execution = {name: params.pop(name) for name in EXECUTION_NAMES}  # the rest: Python's
    _check_sign_key(sign_key, dry_run)
    junit = execution.pop("junit")
    check_junit_path(junit)
    if spec.suffix == ".py" or ".py@" in str(spec):
        from assay.cli._tasks import run_tasks

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
            **eval_options(params),
            "output": output,
            "max_samples": execution["max_concurrency"],
            "max_sandboxes": max_sandboxes,
            "sandbox_cleanup": not keep_sandboxes,
            "cache": bool(cache),
            "cache_expiry": cache_expiry or DEFAULT_EXPIRY,
            "prices": prices,
            "progress": progress_line(execution["progress"]),
            "cluster": execution["cluster"],
        }
        options.update(given_settings(context))
        run_tasks(str(spec), params["models"], options, sign_key, junit)

    refuse_python_only_options(context)
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
    from assay.evidence._keys import load_private_key

    load_private_key(path)


def _check_sink(url: str | None) -> None:
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError("spec.shape", path="--sink", reason="the sink must be an http(s) URL")
