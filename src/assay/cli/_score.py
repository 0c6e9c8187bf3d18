"""``assay score RUN`` and ``assay gate RUN``: redo a step from verified evidence alone."""

from __future__ import annotations

from pathlib import Path

import click

from assay._messages import say
from assay.cli._ci import check_junit_path, junit_option, write_ci_outputs
from assay.cli._print import print_decision, print_usage
from assay.cli._run_options import baseline_option
from assay.cli._sign import check_trust, trust_option
from assay.errors import EXIT_EVIDENCE


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@baseline_option
@trust_option
@junit_option
def score(
    run_dir: Path, baseline: Path | None, trust: tuple[Path, ...], junit: Path | None
) -> None:
    """Re-score RUN from its evidence (after verifying it); never calls a target."""
    from assay.pipeline import rescore_run

    check_junit_path(junit)
    _check_trusted(run_dir, baseline, trust)
    result = rescore_run(run_dir, baseline)
    print_decision(result.metrics, result.gate, result.report.scorers)
    print_usage(result.report)
    write_ci_outputs([result.report], junit)
    if result.differing:
        click.echo(
            say(
                "out.scores_differ",
                scores=result.scores,
                count=len(result.differing),
                first=result.differing[0],
            )
        )
        raise SystemExit(EXIT_EVIDENCE)
    click.echo(say("out.scores_same", scores=result.scores))


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@baseline_option
@trust_option
@junit_option
def gate(run_dir: Path, baseline: Path | None, trust: tuple[Path, ...], junit: Path | None) -> None:
    """Re-decide RUN's gate from its verified evidence; the exit code is the decision."""
    from assay.pipeline import rescore_run

    check_junit_path(junit)
    _check_trusted(run_dir, baseline, trust)
    result = rescore_run(run_dir, baseline)
    code = print_decision(result.metrics, result.gate, result.report.scorers)
    write_ci_outputs([result.report], junit)
    raise SystemExit(code)


def _check_trusted(run_dir: Path, baseline: Path | None, trust: tuple[Path, ...]) -> None:
    """``--trust``: the run, and the baseline its gate compares with, must both be signed
    by a trusted key: a forged baseline could make any regression look like none."""
    if not trust:
        return
    from assay.pipeline import baseline_of_run

    check_trust(run_dir, trust)
    used = baseline_of_run(run_dir, baseline)
    if used is not None:
        check_trust(used, trust)
