"""``assay keygen PATH``, ``assay sign RUN --key KEY`` and the ``--trust PUB`` option.

A signature is a claim by whoever holds the key; ``--trust`` is how a reader says whose
claims count. This module imports ``cryptography`` only when a key is actually used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from assay._messages import say

F = TypeVar("F", bound=Callable[..., Any])

trust_option = click.option(
    "--trust",
    "trust",
    metavar="PUB",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Refuse the run (exit 4) unless it is signed by this public key (repeatable: any).",
)
"""``--trust PUB``, declared once for verify, score, gate, compare and show."""


def check_trust(run_dir: Path, trust: Sequence[Path]) -> str | None:
    """When keys are trusted, raise EvidenceError (exit 4, one line) unless *run_dir* is
    signed by one of them over its manifest as it is now; return the signing keyid."""
    if not trust:
        return None
    from assay.evidence._attest import check_trusted
    from assay.evidence._keys import load_public_key

    keys = [load_public_key(path) for path in trust]
    return check_trusted(run_dir, keys)


def sign_after_run(run_dir: Path | None, key_path: Path | None) -> None:
    """``run --sign``: sign the run just sealed, and say so (stderr: stdout is the run's)."""
    if key_path is None or run_dir is None:
        return
    from assay.evidence._keys import load_private_key

    _sign_and_say(run_dir, load_private_key(key_path), err=True)


def _sign_and_say(run_dir: Path, key: Any, *, err: bool = False) -> None:
    from assay.evidence._attest import sign_run
    from assay.evidence._layout import ATTESTATION

    keyid = sign_run(run_dir, key)
    click.echo(say("out.signed_now", path=run_dir, keyid=keyid, file=ATTESTATION), err=err)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
def keygen(path: Path) -> None:
    """Write a new Ed25519 key pair: PATH (private, mode 0600) and PATH.pub (public)."""
    from assay.evidence._keys import generate_keypair

    keyid = generate_keypair(path)
    public = path.with_name(path.name + ".pub")
    click.echo(say("out.keygen", private=path, public=public, keyid=keyid))


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option(
    "--key",
    "key_path",
    required=True,
    type=click.Path(path_type=Path),
    help="Ed25519 private key (PEM): assay keygen's, or openssl genpkey -algorithm ed25519's.",
)
def sign(run_dir: Path, key_path: Path) -> None:
    """Sign the sealed run RUN: verify it, then write RUN/attestation.dsse.json."""
    from assay.errors import EvidenceError
    from assay.evidence import read_manifest, verify_run
    from assay.evidence._attest import SEALED
    from assay.evidence._keys import load_private_key

    key = load_private_key(key_path)
    status = read_manifest(run_dir).get("status")
    if status not in SEALED:
        raise EvidenceError("sign.unsealed", path=str(run_dir), status=status)
    result = verify_run(run_dir)  # never vouch for evidence that does not verify
    if not result.ok:
        raise EvidenceError(
            "evidence.tampered",
            path=str(run_dir),
            count=len(result.problems),
            first=result.problems[0],
        )
    _sign_and_say(run_dir, key)
