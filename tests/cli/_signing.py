"""What the signing tests share: keys made by ``assay keygen``, the shipping run, the
attestation read back with json and base64 alone."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from assay.errors import EXIT_FAILED, EXIT_PASSED
from tests.helpers import SHIPPING, run_cli

OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
ATTESTATION = "attestation.dsse.json"


def keygen(path: Path) -> str:
    """Run ``assay keygen PATH``; return the fingerprint it printed."""
    proc = run_cli("keygen", path)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return proc.stdout.rsplit("fingerprint ", 1)[1].strip()


def raw_fingerprint(public_pem: bytes) -> str:
    """sha256 of the 32 raw public bytes, computed here (not by assay)."""
    from cryptography.hazmat.primitives import serialization  # not for every test of cli/
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = serialization.load_pem_public_key(public_pem)
    assert isinstance(key, ed25519.Ed25519PublicKey)
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def shipping_run(tmp_path: Path, name: str, *extra: str | Path) -> Path:
    """Run the shipping example (its real gate: failed) into *tmp_path*/*name*."""
    run = tmp_path / name
    proc = run_cli("run", SHIPPING / "eval.yaml", "--output", run, *extra)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    return run


def envelope(run: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run / ATTESTATION).read_bytes())
    return data


def statement(run: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(base64.b64decode(str(envelope(run)["payload"])))
    return data
