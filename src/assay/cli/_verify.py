"""``assay verify RUN`` (alias ``inspect``): re-derive every digest and name what changed."""

from __future__ import annotations

from pathlib import Path

import click

from assay._messages import say
from assay.cli._sign import check_trust, trust_option
from assay.errors import EXIT_EVIDENCE, EXIT_INCONCLUSIVE, EXIT_PASSED, printable


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@trust_option
def verify(run_dir: Path, trust: tuple[Path, ...]) -> None:
    """Verify the evidence in RUN; exit 0 when every digest matches, 3 when it does but
    the run is unfinished, 4 otherwise."""
    from assay.evidence import verify_run

    keyid = check_trust(run_dir, trust)
    result = verify_run(run_dir)
    for note in result.notes:  # how it was checked, not what was found: stderr
        click.echo(note, err=True)
    if result.ok and result.unfinished:
        click.echo(
            say(
                "out.verify_unfinished",
                path=run_dir,
                status=result.status,
                finished=result.bundles,
                planned=result.planned,
            )
        )
        raise SystemExit(EXIT_INCONCLUSIVE)
    if result.ok:
        click.echo(
            say(
                "out.verify_ok",
                path=run_dir,
                trials=result.trials,
                events=result.events,
                artifacts=result.artifacts,
                bundles=result.bundles,
                scores=result.scores,
            )
        )
        click.echo(_signature_line(run_dir, keyid))
        raise SystemExit(EXIT_PASSED)
    click.echo(say("out.verify_bad", path=run_dir, count=len(result.problems)))
    for problem in result.problems:
        click.echo(f"  - {printable(problem)}")  # a stray file's name is anyone's
    raise SystemExit(EXIT_EVIDENCE)


def _signature_line(run_dir: Path, keyid: str | None) -> str:
    """Whether the run is signed, and by which key: checked when a key is trusted, else
    what the envelope claims (anyone could have written it)."""
    if keyid is not None:
        return say("out.signed_trusted", keyid=keyid)
    from assay.evidence._attest import signature_line

    key, params = signature_line(run_dir)
    return say(key, **params)
