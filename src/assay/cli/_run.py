"""``assay run SPEC``: run an evaluation end to end."""

from __future__ import annotations

import time
from pathlib import Path

import click

from assay._messages import say
from assay.cli._print import print_decision
from assay.errors import ConfigError


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Run directory to create.")
@click.option(
    "--max-concurrency", "-j", type=click.IntRange(1, 10_000), default=16, show_default=True
)
@click.option("--dry-run", is_flag=True, help="Run and print events; write nothing.")
@click.option("--sink", "sink_url", help="Also post event batches to this HTTP URL.")
@click.option(
    "--sink-max-failure-rate", type=click.FloatRange(0, 1), default=0.5, show_default=True
)
def run(
    spec: Path,
    output: Path | None,
    max_concurrency: int,
    dry_run: bool,
    sink_url: str | None,
    sink_max_failure_rate: float,
) -> None:
    """Run SPEC (a YAML file): plan, trials, evidence, scores, gate and reports."""
    from assay.pipeline import RunOptions, run_spec
    from assay.spec import load_spec

    loaded = load_spec(spec)
    if sink_url and not sink_url.startswith(("http://", "https://")):
        raise ConfigError("spec.shape", path="--sink", reason="the sink must be an http(s) URL")
    if output is None and not dry_run:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        output = Path("runs") / f"{loaded.spec.evaluation}-{stamp}"
    options = RunOptions(
        output=output,
        max_concurrency=max_concurrency,
        dry_run=dry_run,
        sink_url=sink_url,
        sink_max_failure_rate=sink_max_failure_rate,
    )
    outcome = run_spec(loaded, options)
    code = print_decision(outcome.metrics, outcome.gate, [s.id for s in loaded.spec.scorers])
    click.echo(say("out.dry_run") if dry_run else say("out.run_dir", path=outcome.path))
    raise SystemExit(code)
