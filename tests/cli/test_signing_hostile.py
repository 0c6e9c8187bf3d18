"""Keys and signatures a user or an attacker could hand to assay, through the real CLI.

Each is one line and a documented exit code, never an internal error: a key file that
never ends (``/dev/zero``), a key PATH that names no file, an attestation nested too
deeply for the JSON reader, one that is a link to ``/dev/zero`` or far too large. The
commands run with their address space capped, so a read that does not stop fails fast
(as MemoryError, exit 70) instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE, EXIT_PASSED
from tests.cli._signing import ATTESTATION, keygen, shipping_run
from tests.helpers import MEMORY_CAP, SHIPPING, error_line, run_capped, run_cli


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a shipping run signed by ``run --sign``, the public key that signed it)."""
    folder = tmp_path_factory.mktemp("hostile")
    keygen(folder / "ci")
    return shipping_run(folder, "run", "--sign", folder / "ci"), folder / "ci.pub"


@pytest.mark.doc(
    "docs/cli.md",
    "A key file larger than 64 KiB is exit 2 too (an Ed25519 key in PEM is under 200 "
    "bytes), as is a key that never ends, such as `/dev/zero`.",
)
def test_a_key_file_that_never_ends_is_one_line_exit_2(
    signed: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = signed
    for command in (
        ["verify", run, "--trust", "/dev/zero"],
        ["sign", run, "--key", "/dev/zero"],
        ["run", SHIPPING / "eval.yaml", "--output", tmp_path / "r", "--sign", "/dev/zero"],
    ):
        proc = run_capped(*command)
        assert proc.returncode == EXIT_CONFIG, (command, proc.stdout + proc.stderr)
        assert "larger than 64 KiB" in error_line(proc), command
    big = tmp_path / "big.pub"
    big.write_bytes(b"# padding\n" * 7_000 + run.parent.joinpath("ci.pub").read_bytes())
    proc = run_cli("verify", run, "--trust", big)
    assert proc.returncode == EXIT_CONFIG
    assert "larger than 64 KiB" in error_line(proc)


@pytest.mark.doc("docs/cli.md", "A PATH that names no file (`.`, `/`) is exit 2.")
def test_keygen_refuses_a_path_that_names_no_file(tmp_path: Path) -> None:
    for path in (".", "/", ""):
        proc = run_cli("keygen", path, cwd=tmp_path)
        assert proc.returncode == EXIT_CONFIG, (path, proc.stdout + proc.stderr)
        assert "names no file" in error_line(proc), path
    assert list(tmp_path.iterdir()) == []


def _hostile_copy(run: Path, folder: Path, name: str) -> Path:
    copy = folder / name
    shutil.copytree(run, copy)
    (copy / ATTESTATION).unlink()
    return copy


def test_an_attestation_nested_too_deeply_is_unreadable_not_a_crash(
    signed: tuple[Path, Path], tmp_path: Path
) -> None:
    run, pub = signed
    deep = _hostile_copy(run, tmp_path, "deep")
    (deep / ATTESTATION).write_bytes(b"[" * 100_000 + b"]" * 100_000)
    proc = run_cli("verify", deep)  # the claim is said to be unreadable; nothing it binds
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert "signature: attestation.dsse.json cannot be read (nested too deeply)" in proc.stdout
    for command in ("verify", "score", "gate"):
        proc = run_cli(command, deep, "--trust", pub)
        assert proc.returncode == EXIT_EVIDENCE, (command, proc.stdout + proc.stderr)
        assert "cannot be read: nested too deeply" in error_line(proc), command
    listed = _hostile_copy(run, tmp_path, "listed")
    (listed / ATTESTATION).write_text("[1, 2]")
    proc = run_cli("verify", listed, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    assert "cannot be read: it is not a JSON object" in error_line(proc)


def test_an_attestation_that_never_ends_or_is_huge_is_refused_unread(
    signed: tuple[Path, Path], tmp_path: Path
) -> None:
    run, pub = signed
    linked = _hostile_copy(run, tmp_path, "linked")
    (linked / ATTESTATION).symlink_to("/dev/zero")
    proc = run_capped("verify", linked, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr
    assert "cannot be read: it is not a regular file" in error_line(proc)
    huge = _hostile_copy(run, tmp_path, "huge")
    with open(huge / ATTESTATION, "wb") as handle:
        handle.truncate(2 * MEMORY_CAP)  # sparse: no disk used, more than memory allows
    proc = run_capped("verify", huge, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr
    assert "cannot be read: it is larger than 64 MiB" in error_line(proc)
    proc = run_capped("verify", huge)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert "cannot be read (it is larger than 64 MiB)" in proc.stdout


def test_a_claimed_key_id_cannot_write_lines_or_flood_the_terminal(
    signed: tuple[Path, Path], tmp_path: Path
) -> None:
    run, pub = signed
    claims = _hostile_copy(run, tmp_path, "claims")
    envelope = json.loads((run / ATTESTATION).read_bytes())
    forged = "sha256:0\nverified: \x1b[32mall good"
    envelope["signatures"] = [{"keyid": forged, "sig": ""}] + [
        {"keyid": f"sha256:{n:064x}", "sig": ""} for n in range(10_000)
    ]
    (claims / ATTESTATION).write_text(json.dumps(envelope))
    proc = run_cli("verify", claims)  # the claim is printed, as a claim: one line
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("signature: signed by sha256:0\\n"), lines
    assert "\x1b" not in proc.stdout and "+9997" in lines[1] and len(lines[1]) < 500
    proc = run_cli("verify", claims, "--trust", pub)
    assert proc.returncode == EXIT_EVIDENCE
    line = error_line(proc)
    assert "not by a trusted key" in line and "+9997" in line and len(line) < 800
