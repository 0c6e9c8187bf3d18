"""``assay merge SHARD... -o RUN``: join the shards of a sharded run into one run."""

from __future__ import annotations

from pathlib import Path

import click

from assay._messages import say
from assay.cli._print import print_decision, print_usage
from assay.errors import ConfigError


@click.command()
@click.argument(
    "shards", metavar="SHARD...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--output", "-o", required=True, type=click.Path(path_type=Path), help="Merged run to create."
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Baseline run for the spec's no_regression gate (overrides the spec's baseline).",
)
def merge(shards: tuple[Path, ...], output: Path, baseline: Path | None) -> None:
    """Merge the shard runs SHARD... (every part K/N of one spec) into the run RUN, gated
    over all their trials; exit as 'assay run' does, 4 when the shards do not make one
    whole run."""
    from assay.pipeline._merge import merge_runs

    _outside_the_shards(shards, output)
    merged = merge_runs(list(shards), output, baseline)
    code = print_decision(merged.metrics, merged.gate, merged.report.scorers)
    print_usage(merged.report)
    click.echo(say("out.run_dir", path=merged.path))
    raise SystemExit(code)


def _outside_the_shards(shards: tuple[Path, ...], output: Path) -> None:
    """Refuse an output folder inside a shard (exit 2): the copy of that shard would hold
    the folder it is copied into, without end. The shard itself exists: exit 5, later."""
    where = output.resolve()
    for shard in shards:
        folder = shard.resolve()
        if where != folder and where.is_relative_to(folder):  # the shard itself: it exists
            raise ConfigError("merge.output_in_shard", path=str(output), shard=str(shard))
