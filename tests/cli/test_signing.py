"""Signed attestations through the real CLI: ``assay keygen``, ``assay sign``, ``run
--sign`` and ``--trust``, with keys from assay and from the real ``openssl``.

The envelope is read back here with nothing but json, base64 and ``cryptography``'s
Ed25519 (the DSSE pre-authentication encoding rebuilt by hand), so a test passes only if
another tool could check the signature the same way.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE, EXIT_FAILED, EXIT_PASSED
from tests.cli._signing import (
    ATTESTATION,
    OPENSSL,
    envelope,
    keygen,
    needs_openssl,
    raw_fingerprint,
    shipping_run,
)
from tests.helpers import (
    SHIPPING,
    error_line,
    run_cli,
)


@pytest.mark.doc(
    "docs/cli.md",
    "`keygen PATH` writes a new Ed25519 key pair: `PATH`, the private key (PEM, PKCS #8, "
    "unencrypted, mode 0600), and `PATH.pub`, its public key (PEM).",
    "It refuses (exit 2) when either file exists.",
    "A key's fingerprint is `sha256:` and the hex SHA-256 of its 32 raw public-key bytes.",
    "| `keygen PATH` | write a new Ed25519 key pair for signing runs: `PATH` and `PATH.pub` |",
)
def test_keygen_writes_a_0600_pair_and_never_overwrites(tmp_path: Path) -> None:
    key = tmp_path / "release"
    printed = keygen(key)
    assert key.stat().st_mode & 0o777 == 0o600
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    assert isinstance(private, ed25519.Ed25519PrivateKey)
    assert key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    public_pem = (tmp_path / "release.pub").read_bytes()
    assert printed == raw_fingerprint(public_pem)
    mine = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert mine == public_pem  # the .pub is the private key's own half
    before = key.read_bytes()
    again = run_cli("keygen", key)
    assert again.returncode == EXIT_CONFIG
    assert "already exists" in error_line(again)
    assert key.read_bytes() == before
    key.unlink()  # only the .pub is left: still refused, the private key is not written
    again = run_cli("keygen", key)
    assert again.returncode == EXIT_CONFIG
    assert "release.pub already exists" in error_line(again)
    assert not key.exists()


@needs_openssl
@pytest.mark.doc(
    "docs/cli.md",
    "KEY is an Ed25519 private key in PEM: `assay keygen`'s, or one made by `openssl "
    "genpkey -algorithm ed25519`.",
    "`run --sign KEY` signs the run as soon as it is sealed",
    "PUB is a public key in PEM (`KEY.pub`, or `openssl pkey -in KEY -pubout`'s)",
    "With `--trust` it says `signed by sha256:…, a trusted key`.",
)
def test_an_openssl_key_signs_a_run_and_its_public_half_is_trusted(tmp_path: Path) -> None:
    key, pub = tmp_path / "k.pem", tmp_path / "k.pub"
    subprocess.run([OPENSSL, "genpkey", "-algorithm", "ed25519", "-out", key], check=True)
    subprocess.run([OPENSSL, "pkey", "-in", key, "-pubout", "-out", pub], check=True)
    der = subprocess.run(
        [OPENSSL, "pkey", "-pubin", "-in", pub, "-outform", "DER"], capture_output=True, check=True
    ).stdout
    fingerprint = "sha256:" + hashlib.sha256(der[-32:]).hexdigest()  # openssl's raw key
    run = shipping_run(tmp_path, "run", "--sign", key)
    assert [s["keyid"] for s in envelope(run)["signatures"]] == [fingerprint]  # type: ignore[union-attr,index]
    proc = run_cli("verify", run, "--trust", pub)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert f"signature: signed by {fingerprint}, a trusted key" in proc.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "It is an in-toto Statement v1 (`_type` `https://in-toto.io/Statement/v1`) in a DSSE envelope:",
    "`payloadType` is `application/vnd.in-toto+json`, `payload` the base64 of the "
    "statement's canonical JSON, and `signatures` a list of `{keyid, sig}`",
    "`sig` is the base64 of an Ed25519 signature over DSSE's pre-authentication encoding",
    "The statement's one subject is `manifest.json`, with the SHA-256 of its bytes as written",
    "`predicateType` is `urn:assay:run-verdict:v1`",
    "The predicate repeats the manifest's `evaluation`, `spec_digest`, `planned`, `events` "
    "and `events_head`, and adds `run_status`, the gate's decision from `report.json` "
    "(`status`, `reasons`, and per target its `status`, `gated`, `minimum` and `numbers`: "
    "passed, denominator, rate and interval per scorer), the `assay_version` that ran and "
    "the one that signed (`signed_with`), and `started` / `finished` (RFC 3339, UTC).",
    "`assay sign RUN --key KEY` (or `assay run SPEC --sign KEY`) writes "
    "`attestation.dsse.json` into a sealed run.",
)
def test_the_envelope_is_dsse_over_an_in_toto_statement_of_the_manifest(
    signed: Path, keys: dict[str, Path]
) -> None:
    outer = envelope(signed)
    assert outer["payloadType"] == "application/vnd.in-toto+json"
    payload = base64.b64decode(str(outer["payload"]))
    claim = json.loads(payload)
    assert payload == json.dumps(claim, sort_keys=True, separators=(",", ":")).encode()
    manifest_bytes = (signed / "manifest.json").read_bytes()
    manifest = json.loads(manifest_bytes)
    assert claim["_type"] == "https://in-toto.io/Statement/v1"
    assert claim["subject"] == [
        {"name": "manifest.json", "digest": {"sha256": hashlib.sha256(manifest_bytes).hexdigest()}}
    ]
    assert claim["predicateType"] == "urn:assay:run-verdict:v1"
    predicate = claim["predicate"]
    for field in ("evaluation", "spec_digest", "planned", "events", "events_head"):
        assert predicate[field] == manifest[field], field
    assert predicate["run_status"] == "complete"
    assert predicate["assay_version"] == manifest["assay_version"]
    gate = predicate["gate"]
    assert gate["status"] == "failed"  # the shipping example's real verdict
    buggy = next(t for t in gate["targets"] if t["target_id"] == "buggy-release")
    numbers = buggy["numbers"]["fee-matches"]
    assert (buggy["status"], numbers["passed"], numbers["denominator"]) == ("failed", 2, 3)
    assert predicate["started"].endswith("Z") and predicate["finished"] >= predicate["started"]
    # the signature, checked the way any DSSE tool would: over PAE, by the public key
    (entry,) = outer["signatures"]  # type: ignore[misc]
    public_pem = keys["ci"].with_name("ci.pub").read_bytes()
    assert entry["keyid"] == raw_fingerprint(public_pem)
    kind = b"application/vnd.in-toto+json"
    pae = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)
    public = serialization.load_pem_public_key(public_pem)
    assert isinstance(public, ed25519.Ed25519PublicKey)
    public.verify(base64.b64decode(entry["sig"]), pae)  # raises if it does not verify


def _trust_args(command: str, run: Path, twin: Path, pub: Path) -> list[str | Path]:
    if command == "compare":
        return ["compare", twin, run, "--trust", pub]
    if command == "show":
        return ["show", run, "order-100", "--trust", pub]
    return [command, run, "--trust", pub]


COMMANDS = ["verify", "score", "gate", "compare", "show"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.doc(
    "docs/cli.md",
    "`--trust PUB` (on `verify`, `score`, `gate`, `compare` and `show`; repeatable, any of "
    "the keys will do) refuses the run, with exit 4 and one line, unless it is signed by a "
    "trusted key and the signature covers its `manifest.json` as it is now",
    "a run that is unsigned, signed by another key, whose signature does not verify, or "
    "whose manifest changed after signing",
    "`compare` checks both runs.",
    "| 4 | evidence missing or tampered, or not a run directory; `score`: recomputed scores "
    "differ; `--trust`: the run is unsigned, signed by another key, its signature does not "
    "verify or its manifest changed after signing; `sign`: the run is not sealed, does not "
    "verify or is being written |",
)
def test_trust_refuses_each_way_a_signature_can_fail(
    command: str, signed: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    ci_pub, other_pub = keys["ci"].with_name("ci.pub"), keys["other"].with_name("other.pub")
    good = _trust_args(command, signed, signed, ci_pub)
    proc = run_cli(*good)
    assert proc.returncode == (EXIT_FAILED if command == "gate" else EXIT_PASSED)

    unsigned = tmp_path / "unsigned"
    shutil.copytree(signed, unsigned)
    (unsigned / ATTESTATION).unlink()
    cases = {"is not signed": unsigned}

    for name, why in (("tampered-sig", "does not verify"), ("changed", "another manifest")):
        copy = tmp_path / name
        shutil.copytree(signed, copy)
        cases[why] = copy
    outer = envelope(cases["does not verify"])
    sig = bytearray(base64.b64decode(outer["signatures"][0]["sig"]))  # type: ignore[index]
    sig[0] ^= 1
    outer["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()  # type: ignore[index]
    (cases["does not verify"] / ATTESTATION).write_text(json.dumps(outer))
    manifest = cases["another manifest"] / "manifest.json"
    manifest.write_bytes(manifest.read_bytes() + b"\n")  # one byte: no longer what was signed

    for why, run in cases.items():
        proc = run_cli(*_trust_args(command, run, signed, ci_pub))
        assert proc.returncode == EXIT_EVIDENCE, (why, proc.stdout + proc.stderr)
        assert why in error_line(proc), why
        assert proc.stdout == ""  # refused before anything was read or printed
    other = run_cli(*_trust_args(command, signed, signed, other_pub))
    assert other.returncode == EXIT_EVIDENCE
    assert "not by a trusted key" in error_line(other)
    either = run_cli(*_trust_args(command, signed, signed, other_pub), "--trust", ci_pub)
    assert either.returncode == (EXIT_FAILED if command == "gate" else EXIT_PASSED)
    if command == "compare":  # the baseline side is checked too
        proc = run_cli("compare", unsigned, signed, "--trust", ci_pub)
        assert proc.returncode == EXIT_EVIDENCE
        assert "unsigned is not signed" in error_line(proc)


@pytest.mark.doc(
    "docs/cli.md",
    "Without `--trust`, `verify` adds a line saying whether the run carries a signature and "
    "by which key fingerprint (`signature: signed by sha256:…` or `signature: none "
    "(unsigned run)`); that line is a claim read from the envelope, not checked, and does "
    "not change the exit code.",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "The manifest cannot list the attestation (the attestation signs the manifest), so "
    "`verify` does not count it as evidence: without `--trust` it only reports what the "
    "envelope claims.",
)
def test_plain_verify_says_signed_by_which_key_or_unsigned(
    signed: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    fingerprint = raw_fingerprint(keys["ci"].with_name("ci.pub").read_bytes())
    proc = run_cli("verify", signed)
    assert proc.returncode == EXIT_PASSED
    assert f"signature: signed by {fingerprint}, over this manifest.json" in proc.stdout
    unsigned = tmp_path / "unsigned"
    shutil.copytree(signed, unsigned)
    (unsigned / ATTESTATION).unlink()
    proc = run_cli("verify", unsigned)
    assert proc.returncode == EXIT_PASSED
    assert "signature: none (unsigned run)" in proc.stdout
    (unsigned / ATTESTATION).write_text("not json")  # a broken claim: said, not fatal
    proc = run_cli("verify", unsigned)
    assert proc.returncode == EXIT_PASSED
    assert "signature: attestation.dsse.json cannot be read" in proc.stdout


@needs_openssl
@pytest.mark.doc(
    "docs/cli.md",
    "A key that is missing, encrypted, not PEM or not Ed25519 is exit 2.",
    "The key is checked before any trial runs (exit 2), and `--sign` with `--dry-run` is exit 2.",
    "a private key given as PUB is exit 2.",
)
def test_a_key_that_cannot_sign_is_refused_before_anything_runs(
    tmp_path: Path, keys: dict[str, Path], signed: Path
) -> None:
    encrypted, rsa = tmp_path / "enc.pem", tmp_path / "rsa.pem"
    subprocess.run(
        [
            OPENSSL,
            "genpkey",
            "-algorithm",
            "ed25519",
            "-aes256",
            "-pass",
            "pass:x",
            "-out",
            encrypted,
        ],
        check=True,
    )
    subprocess.run(
        [OPENSSL, "genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024", "-out", rsa],
        check=True,
    )
    public = keys["ci"].with_name("ci.pub")
    for key, why in (
        (tmp_path / "missing.pem", "No such file"),
        (encrypted, "encrypted"),
        (rsa, "its type is RSAPrivateKey, not Ed25519"),
        (public, "not a PEM private key (it is a public key)"),
    ):
        run = tmp_path / f"run-{key.name}"
        proc = run_cli("run", SHIPPING / "eval.yaml", "--output", run, "--sign", key)
        assert proc.returncode == EXIT_CONFIG, (why, proc.stdout + proc.stderr)
        assert why in error_line(proc)
        assert not run.exists()  # refused before the run folder was made
    proc = run_cli("run", SHIPPING / "eval.yaml", "--dry-run", "--sign", keys["ci"])
    assert proc.returncode == EXIT_CONFIG
    assert "--sign" in error_line(proc)
    proc = run_cli("verify", signed, "--trust", keys["ci"])
    assert proc.returncode == EXIT_CONFIG
    assert "it is a private key" in error_line(proc)
