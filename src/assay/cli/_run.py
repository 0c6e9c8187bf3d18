"""``assay run SPEC`` and ``assay resume RUN``: run an evaluation end to end, or finish one."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from assay._messages import say
from assay.cli._print import print_decision
from assay.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def execution_options(func: F) -> F:
    """The options ``run`` and ``resume`` share, declared once."""
    options = [
        click.option(
            "--max-concurrency",
            "-j",
            type=click.IntRange(1, 10_000),
            default=16,
            show_default=True,
            help="Trials in flight at once.",
        ),
        click.option("--sink", "sink_url", help="Also post event batches to this HTTP URL."),
        click.option(
            "--sink-max-failure-rate",
            type=click.FloatRange(0, 1),
            default=0.5,
            show_default=True,
            help="Stop the run once more than this share of sink batches has failed.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Run directory to create.")
@click.option("--dry-run", is_flag=True, help="Run and print events; write nothing.")
@execution_options
def run(spec: Path, output: Path | None, dry_run: bool, **execution: Any) -> None:
    """Run SPEC (a YAML file): plan, trials, evidence, scores, gate and reports."""
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    loaded = load_spec(spec)
    _check_sink(execution["sink_url"])
    if output is None and not dry_run:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        output = Path("runs") / f"{loaded.spec.evaluation}-{stamp}"
    options = RunOptions(output=output, dry_run=dry_run, handle_signals=True, **execution)
    outcome = run_spec(loaded, options)
    code = print_decision(outcome.metrics, outcome.gate, [s.id for s in loaded.spec.scorers])
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
@execution_options
def resume(run_dir: Path, spec_path: Path | None, **execution: Any) -> None:
    """Finish an interrupted run in RUN: keep finished trials, run the rest."""
    from assay.pipeline import RunOptions, load_for_resume, resume_run

    _check_sink(execution["sink_url"])
    loaded = load_for_resume(run_dir, spec_path)
    options = RunOptions(output=run_dir, handle_signals=True, **execution)
    outcome = resume_run(run_dir, options, loaded.source)
    code = print_decision(outcome.metrics, outcome.gate, [s.id for s in loaded.spec.scorers])
    click.echo(say("out.run_dir", path=outcome.path))
    raise SystemExit(code)


def _check_sink(url: str | None) -> None:
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError("spec.shape", path="--sink", reason="the sink must be an http(s) URL")
