"""Signing runs through their life, through the real CLI: a running run is refused and an
interrupted one signed, ``resume --sign`` and a resume that leaves a stale signature, a
Python task's run, a plain verify that never imports ``cryptography``, and signatures
that hold over a run whose other files changed or over a statement that misstates it."""

from __future__ import annotations

import base64
import fcntl
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE, EXIT_INCONCLUSIVE, EXIT_PASSED
from tests.cli._signing import ATTESTATION, envelope, statement
from tests.helpers import (
    REPO,
    SHIPPING,
    error_line,
    interrupted_at_last_trial,
    quiz_tasks,
    run_blocked_at_last_trial,
    run_cli,
    write_module,
)


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
    return run_blocked_at_last_trial(tmp_path)


@pytest.mark.doc("docs/cli.md", "`resume --sign KEY` does the same for the run it finishes")
def test_resume_sign_signs_the_run_it_finishes(tmp_path: Path, keys: dict[str, Path]) -> None:
    run = interrupted_at_last_trial(tmp_path)
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
    run = interrupted_at_last_trial(tmp_path)
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
