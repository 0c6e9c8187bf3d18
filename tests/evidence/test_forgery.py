"""The forgery the issue describes, done for real: an attacker's script that uses only
json and hashlib (``forge_run.py``, no assay code) rewrites a signed shipping run so its
failed gate passes. Plain ``verify`` cannot tell (the documented limit); ``--trust``
refuses it, naming the signature.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import EXIT_EVIDENCE, EXIT_FAILED, EXIT_PASSED
from tests.helpers import SHIPPING, error_line, run_cli

FORGER = Path(__file__).with_name("forge_run.py")


@pytest.fixture(scope="module")
def signed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a signed shipping run whose real gate failed, the public key that signed it)."""
    folder = tmp_path_factory.mktemp("forgery")
    assert run_cli("keygen", folder / "ci").returncode == EXIT_PASSED
    run = folder / "run"
    proc = run_cli("run", SHIPPING / "eval.yaml", "--output", run, "--sign", folder / "ci")
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    return run, folder / "ci.pub"


def forge(original: Path, copy: Path) -> str:
    """Copy the run and forge the copy with the attacker's script; return the victim."""
    shutil.copytree(original, copy)
    proc = subprocess.run(
        [sys.executable, "-I", FORGER, copy], capture_output=True, text=True, check=True
    )
    assert "assay" not in FORGER.read_text().replace("no assay code", "")  # json/hashlib only
    return proc.stdout.strip()


@pytest.mark.doc(
    "docs/evidence.md",
    "Anyone who can write the folder can do what assay does: recompute every digest, "
    "re-chain the event log and rewrite the manifest, and `verify` then passes.",
    "a failed trial of the shipping example re-pointed at another target's output, its "
    "score flipped, and `verify`, `score` and `gate` all pass the forged run.",
    "It does not prove who made the run.",
    "a run signed by a key you trust cannot be changed that way: the signature's subject "
    "is the manifest's SHA-256, and the manifest binds the event chain's head and every "
    "file's digest, so any change to the evidence changes the manifest and breaks the "
    "signature.",
)
def test_a_forged_run_passes_plain_verify_and_fails_trust(
    signed_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run, pub = signed_run
    forged = tmp_path / "forged"
    victim = forge(run, forged)
    assert victim.startswith("t-")
    # the forgery is real: the victim trial now passes and so does the whole gate
    scores = [json.loads(line) for line in (forged / "scores.jsonl").read_bytes().splitlines()]
    assert {s["status"] for s in scores if s["trial_id"] == victim} == {"passed"}
    assert (forged / "manifest.json").read_bytes() != (run / "manifest.json").read_bytes()
    for command in ("verify", "score"):
        proc = run_cli(command, forged)
        assert proc.returncode == EXIT_PASSED, (command, proc.stdout + proc.stderr)
    proc = run_cli("gate", forged)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr  # the real gate: failed
    assert "gate: passed" in proc.stdout
    for command in ("verify", "score", "gate"):
        proc = run_cli(command, forged, "--trust", pub)
        assert proc.returncode == EXIT_EVIDENCE, (command, proc.stdout + proc.stderr)
        line = error_line(proc)
        assert "the signature of" in line and "over another manifest.json" in line, line
    # the same evidence, untouched, is accepted with the same key
    assert run_cli("verify", run, "--trust", pub).returncode == EXIT_PASSED


@pytest.mark.doc(
    "docs/evidence.md",
    "Editing the statement to name the new manifest breaks the signature itself, and "
    "signing the forgery with another key names that key, which is not the trusted one.",
    "- A signer who lies.",
    "The signature says who vouches for the run, not that the run is honest: whoever holds "
    "the key can sign a forged or hand-made run, and `assay sign` checks only that the run "
    "verifies.",
)
def test_the_forger_cannot_repair_the_statement_or_sign_with_his_own_key(
    signed_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run, pub = signed_run
    forged = tmp_path / "forged"
    forge(run, forged)
    envelope_path = forged / "attestation.dsse.json"
    envelope = json.loads(envelope_path.read_bytes())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    manifest_hash = hashlib.sha256((forged / "manifest.json").read_bytes()).hexdigest()
    statement["subject"][0]["digest"]["sha256"] = manifest_hash
    statement["predicate"]["events_head"] = json.loads((forged / "manifest.json").read_bytes())[
        "events_head"
    ]
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    envelope["payload"] = base64.b64encode(payload).decode()
    envelope_path.write_text(json.dumps(envelope))
    proc = run_cli("verify", forged, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    assert "does not verify: the attestation was changed" in error_line(proc)
    # the forger's own key: a valid signature, by a key nobody trusts
    assert run_cli("keygen", tmp_path / "mallory").returncode == EXIT_PASSED
    envelope_path.unlink()
    assert run_cli("sign", forged, "--key", tmp_path / "mallory").returncode == EXIT_PASSED
    proc = run_cli("verify", forged, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    assert "not by a trusted key" in error_line(proc)
    # and whoever trusts the forger's key accepts the forgery: a signer can lie
    proc = run_cli("gate", forged, "--trust", tmp_path / "mallory.pub")
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert "gate: passed" in proc.stdout
