"""Signed attestations through the real CLI: ``assay keygen``, ``assay sign``, ``run
--sign`` and ``--trust``, with keys from assay and from the real ``openssl``.

The envelope is read back here with nothing but json, base64 and ``cryptography``'s
Ed25519 (the DSSE pre-authentication encoding rebuilt by hand), so a test passes only if
another tool could check the signature the same way.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE, EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_PASSED
from tests.helpers import (
    REPO,
    SHIPPING,
    error_line,
    quiz_tasks,
    run_blocked_at_last_trial,
    run_cli,
    write_module,
)

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


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    keygen(folder / "ci")
    keygen(folder / "other")
    return {"ci": folder / "ci", "other": folder / "other"}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> Path:
    """A shipping run signed afterwards with ``assay sign`` (read-only for the tests)."""
    run = shipping_run(tmp_path_factory.mktemp("signed"), "run")
    proc = run_cli("sign", run, "--key", keys["ci"])
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return run


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


BLOCKING = """
import pathlib, time

def answer(text):
    if text == "q2":  # the last trial waits for the test to let it go
        gate = pathlib.Path(__file__).with_name("go")
        while not gate.exists():
            time.sleep(0.01)
    return text
"""


@pytest.mark.doc(
    "docs/cli.md",
    "Only a sealed run (`complete` or `interrupted`) is signed: a running or crashed one "
    "(status `running`) is exit 4, as is a run that does not verify or one another process "
    "holds.",
    "`sign RUN --key KEY` verifies RUN, then writes `RUN/attestation.dsse.json`",
    "| `sign RUN --key KEY` | verify a sealed run, then sign it: `RUN/attestation.dsse.json` "
    '(see [evidence.md](evidence.md), "Signatures") |',
)
def test_sign_refuses_a_running_run_and_signs_it_once_interrupted(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    process, run = _blocked_at_its_last_trial(tmp_path)
    try:
        proc = run_cli("sign", run, "--key", keys["ci"])
        assert proc.returncode == EXIT_EVIDENCE
        assert "is not sealed (status running)" in error_line(proc)
        assert not (run / ATTESTATION).exists()
        process.send_signal(signal.SIGINT)  # our own child: sealed as interrupted
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "interrupted"
    proc = run_cli("sign", run, "--key", keys["ci"])
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert statement(run)["predicate"]["run_status"] == "interrupted"  # type: ignore[index]
    proc = run_cli("verify", run, "--trust", keys["ci"].with_name("ci.pub"))
    # the signature holds; the run itself is unfinished (2 of 3 trials): exit 3
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    assert "is UNFINISHED (interrupted)" in proc.stdout
    with open(run / ".lock", "ab") as lock:  # another process holds the run
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = run_cli("sign", run, "--key", keys["other"])
        assert proc.returncode == EXIT_EVIDENCE
        assert "is being written by another assay process" in error_line(proc)
    # a run that does not verify is not signed
    (run / "plan.jsonl").write_bytes((run / "plan.jsonl").read_bytes() + b"\n")
    (run / ATTESTATION).unlink()
    proc = run_cli("sign", run, "--key", keys["ci"])
    assert proc.returncode == EXIT_EVIDENCE
    assert "does not verify" in error_line(proc)
    assert not (run / ATTESTATION).exists()


def _blocked_at_its_last_trial(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    return run_blocked_at_last_trial(tmp_path, BLOCKING)


def _interrupted_at_its_last_trial(tmp_path: Path) -> Path:
    """A run sealed ``interrupted`` (Ctrl-C) while its last trial waited for ``go``."""
    process, run = _blocked_at_its_last_trial(tmp_path)
    try:
        process.send_signal(signal.SIGINT)  # our own child: sealed as interrupted
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return run


@pytest.mark.doc("docs/cli.md", "`resume --sign KEY` does the same for the run it finishes")
def test_resume_sign_signs_the_run_it_finishes(tmp_path: Path, keys: dict[str, Path]) -> None:
    run = _interrupted_at_its_last_trial(tmp_path)
    proc = run_cli("sign", run, "--key", keys["ci"])
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    (tmp_path / "go").touch()  # the last trial may answer now
    proc = run_cli("resume", run, "--sign", keys["other"], cwd=tmp_path)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert "signed" in proc.stderr
    assert statement(run)["predicate"]["run_status"] == "complete"  # type: ignore[index]
    proc = run_cli("verify", run, "--trust", keys["other"].with_name("other.pub"))
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    proc = run_cli("verify", run, "--trust", keys["ci"].with_name("ci.pub"))
    assert proc.returncode == EXIT_EVIDENCE  # the interrupted run's signature was replaced


@pytest.mark.doc(
    "docs/cli.md",
    "`resume` without `--sign` leaves an earlier signature as it is: it is then over "
    "another `manifest.json`, which `verify` reports and `--trust` refuses (exit 4), until "
    "the finished run is signed again.",
)
def test_resume_without_sign_leaves_a_stale_signature_that_trust_refuses(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    run = _interrupted_at_its_last_trial(tmp_path)
    assert run_cli("sign", run, "--key", keys["ci"]).returncode == EXIT_PASSED
    (tmp_path / "go").touch()  # the last trial may answer now
    proc = run_cli("resume", run, cwd=tmp_path)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    proc = run_cli("verify", run)
    assert "over another manifest.json" in proc.stdout
    trusted = keys["ci"].with_name("ci.pub")
    proc = run_cli("verify", run, "--trust", trusted)
    assert proc.returncode == EXIT_EVIDENCE
    assert "over another manifest.json" in error_line(proc)
    assert run_cli("sign", run, "--key", keys["ci"]).returncode == EXIT_PASSED
    assert run_cli("verify", run, "--trust", trusted).returncode == EXIT_PASSED


TASKS = quiz_tasks(2)


@pytest.mark.doc(
    "docs/cli.md",
    "(also each unit of a Python task's run)",
)
def test_run_sign_signs_a_python_task_run(tmp_path: Path, keys: dict[str, Path]) -> None:
    write_module(tmp_path, "tasks", TASKS)
    run = tmp_path / "run"
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        "--output",
        run,
        "--sign",
        keys["ci"],
        cwd=tmp_path,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert "signed " in proc.stderr
    proc = run_cli("verify", run, "--trust", keys["ci"].with_name("ci.pub"))
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert statement(run)["predicate"]["gate"] is not None  # type: ignore[index]


def test_plain_verify_never_imports_cryptography(signed: Path) -> None:
    """``cryptography`` is imported only when a key is used: a plain verify of a signed
    run reads the envelope's claim without it (nor needs the extra installed)."""
    code = (
        "import sys\n"
        "from assay.cli._main import main\n"
        "try:\n"
        "    main(['verify', sys.argv[1]])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, 'cryptography' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, signed], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert "signature: signed by sha256:" in proc.stdout
    assert proc.stdout.strip().endswith("exit 0 False"), proc.stdout


WITHOUT_CRYPTOGRAPHY = (
    "import sys\n"
    "sys.modules['cryptography'] = None  # as if the 'sign' extra were not installed\n"
    "from assay.cli._main import main\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.doc(
    "docs/cli.md",
    "Without the `cryptography` package (the `sign` extra: `pip install 'assay[sign]'`), "
    "`keygen`, `sign`, `run --sign` and `--trust` are exit 2, saying so.",
)
def test_without_cryptography_signing_is_one_line_exit_2(
    signed: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    for args in (
        ["keygen", tmp_path / "k"],
        ["sign", signed, "--key", keys["ci"]],
        ["run", SHIPPING / "eval.yaml", "-o", tmp_path / "run", "--sign", keys["ci"]],
        ["verify", signed, "--trust", keys["ci"].with_name("ci.pub")],
    ):
        proc = subprocess.run(
            [sys.executable, "-c", WITHOUT_CRYPTOGRAPHY, *map(str, args)],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert proc.returncode == EXIT_CONFIG, (args, proc.stdout + proc.stderr)
        assert "pip install 'assay[sign]'" in error_line(proc)
    assert not (tmp_path / "k").exists() and not (tmp_path / "run").exists()


@pytest.mark.doc(
    "docs/cli.md",
    "`show --trust` verifies the whole run before it shows a trial, as `score` does.",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "then `verify` checks everything the manifest binds as usual.",
)
def test_trust_with_an_unchanged_manifest_still_checks_every_file(
    signed: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(signed, run)
    report = run / "report.md"
    report.write_bytes(report.read_bytes() + b"edited\n")  # bound by its digest only
    pub = keys["ci"].with_name("ci.pub")
    assert run_cli("show", run, "order-100").returncode == EXIT_PASSED  # show never reads it
    proc = run_cli("show", run, "order-100", "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    assert "does not verify" in error_line(proc) and "report.md" in error_line(proc)
    proc = run_cli("verify", run, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    assert "report.md" in proc.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "With `--trust PUB`, the signature is checked against that key over the statement, the "
    "statement's subject against `manifest.json` as it is now, and the predicate's manifest "
    "fields against the manifest;",
)
def test_a_valid_signature_over_a_statement_that_misstates_the_run_is_refused(
    signed: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(signed, run)
    outer = envelope(run)
    claim = json.loads(base64.b64decode(str(outer["payload"])))
    claim["predicate"]["spec_digest"] = "sha256:" + "0" * 64  # the subject still matches
    payload = json.dumps(claim, sort_keys=True, separators=(",", ":")).encode()
    private = serialization.load_pem_private_key(keys["ci"].read_bytes(), password=None)
    assert isinstance(private, ed25519.Ed25519PrivateKey)
    kind = b"application/vnd.in-toto+json"
    sig = private.sign(b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload))
    outer["payload"] = base64.b64encode(payload).decode()
    outer["signatures"][0]["sig"] = base64.b64encode(sig).decode()  # type: ignore[index]
    (run / ATTESTATION).write_text(json.dumps(outer))
    proc = run_cli("verify", run, "--trust", keys["ci"].with_name("ci.pub"))
    assert proc.returncode == EXIT_EVIDENCE
    assert "its statement's spec_digest is not the run's" in error_line(proc)


REGRESSION_GATE = "gate:\n  no_regression:\n    margin: 0.5\n    baseline: base\n"


@pytest.mark.doc(
    "docs/cli.md",
    "`score` and `gate` also check the baseline their `no_regression` gate reads (the "
    "`--baseline` run, else the spec's): an unsigned or untrusted baseline is refused the "
    "same way, naming the baseline's folder.",
)
def test_trust_refuses_an_unsigned_baseline_of_a_signed_run(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    """A forged baseline could make any regression look like none: with --trust, the
    baseline a no_regression gate compares with must be signed by a trusted key too."""
    folder = tmp_path / "shipping"
    shutil.copytree(SHIPPING, folder)
    spec = folder / "eval.yaml"
    text = spec.read_text()
    spec.write_text(text[: text.index("gate:")] + REGRESSION_GATE)
    base = run_cli("run", spec, "--output", folder / "base")
    assert base.returncode == EXIT_INCONCLUSIVE, base.stdout + base.stderr  # no baseline yet
    new = run_cli("run", spec, "--output", folder / "new", "--sign", keys["ci"])
    # 3 samples cannot show a margin: the gate's own verdict, never the exit 4 of --trust
    assert new.returncode == EXIT_INCONCLUSIVE, new.stdout + new.stderr
    pub = f"{keys['ci']}.pub"

    for command in ("gate", "score"):  # the spec's baseline, unsigned
        proc = run_cli(command, folder / "new", "--trust", pub)
        assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr
        assert str(folder / "base") in error_line(proc), proc.stderr
        assert proc.stdout == ""

    other = run_cli("run", spec, "--output", folder / "other", "--sign", keys["other"])
    assert other.returncode == EXIT_INCONCLUSIVE, other.stdout + other.stderr
    proc = run_cli("gate", folder / "new", "--baseline", folder / "other", "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr  # another key
    assert str(folder / "other") in error_line(proc), proc.stderr

    assert run_cli("sign", folder / "base", "--key", keys["ci"]).returncode == EXIT_PASSED
    proc = run_cli("gate", folder / "new", "--trust", pub)
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    assert "vs baseline" in proc.stdout
    proc = run_cli("gate", folder / "new", "--baseline", folder / "other", "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr  # the one given wins
