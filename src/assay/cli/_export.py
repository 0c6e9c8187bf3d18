"""``assay export RUN``: every trial of a run as CSV or JSON lines, for a spreadsheet or
a notebook (``assay.read_run`` gives the same rows as pandas DataFrames)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay._messages import say
from assay.cli._sign import check_trust, trust_option
from assay.errors import RunError


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl", "inspect"]),
    default="csv",
    show_default=True,
    help="CSV (one header row, JSON for non-text cells), one JSON object a line, or "
    "Inspect AI's .eval log (a zip; written to RUN.eval without --output).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="File to write [default: stdout].",
)
@click.option(
    "--target",
    help="With --format inspect: the target (model) whose trials are written; needed "
    "when RUN has several (an Inspect log is of one model).",
)
@trust_option
def export(
    run_dir: Path, fmt: str, output: Path | None, target: str | None, trust: tuple[Path, ...]
) -> None:
    """Write one row per trial of RUN: ids, target, sample, repetition, state, input,
    expected, answer, and each scorer's status, value and reason."""
    from assay.evidence._lookup import plain_trial_folders
    from assay.report import write_export

    check_trust(run_dir, trust)
    plain_trial_folders(run_dir)  # a link to /dev/zero among its files: refused unread
    if fmt == "inspect":
        _export_inspect(run_dir, output or run_dir.with_name(run_dir.name + ".eval"), target)
        return
    if output is None:
        write_export(run_dir, fmt, sys.stdout)
        return
    partial = output.with_name(f".{output.name}.partial")
    try:
        with open(partial, "w", encoding="utf-8", newline="") as handle:
            count = write_export(run_dir, fmt, handle)
        partial.replace(output)
    except OSError as exc:
        raise RunError.storage(output, exc) from exc
    finally:
        partial.unlink(missing_ok=True)
    click.echo(say("out.exported", count=count, path=output), err=True)


def _export_inspect(run_dir: Path, output: Path, target: str | None) -> None:
    """Write *run_dir* as Inspect's ``.eval`` log at *output* (whole, or not at all)."""
    from assay.log._inspect import write_inspect_file

    count = write_inspect_file(run_dir, output, target)
    click.echo(say("out.exported", count=count, path=output), err=True)
