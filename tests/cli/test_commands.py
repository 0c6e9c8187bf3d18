"""The command group: help, the inspect alias, and what verify says about a non-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import __version__
from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE
from tests.helpers import error_line, run_cli, simple_spec

COMMANDS = ("run", "verify", "inspect", "score", "gate")


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("good")
    out = base / "run"
    proc = run_cli("run", simple_spec(base / "suite"), "--output", out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command(flag: str) -> None:
    proc = run_cli(flag)
    assert proc.returncode == 0
    commands = proc.stdout.split("Commands:")[1].split()
    for name in COMMANDS:
        assert name in commands
    assert "--lang" in proc.stdout and "--debug" in proc.stdout


def test_no_command_shows_usage() -> None:
    proc = run_cli()
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert "Usage" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help(command: str) -> None:
    proc = run_cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"assay {command}" in proc.stdout


def test_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert __version__ in proc.stdout


@pytest.mark.doc("docs/cli.md", "| 2 | usage or configuration error: nothing was run |")
def test_unknown_command_is_a_usage_error() -> None:
    proc = run_cli("frobnicate")
    assert proc.returncode == EXIT_CONFIG
    assert "frobnicate" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_without_spec_is_a_usage_error() -> None:
    proc = run_cli("run")
    assert proc.returncode == EXIT_CONFIG
    assert "Traceback" not in proc.stderr


@pytest.mark.doc("docs/cli.md", "`verify`: every digest matches")
def test_inspect_is_verify_on_a_good_run(good_run: Path) -> None:
    verified = run_cli("verify", good_run)
    inspected = run_cli("inspect", good_run)
    assert verified.returncode == inspected.returncode == 0
    assert verified.stdout == inspected.stdout
    assert "verified" in verified.stdout
    assert verified.stderr == inspected.stderr == ""


@pytest.mark.doc("docs/cli.md", "| 4 | evidence missing or tampered, or not a run directory;")
def test_inspect_is_verify_on_a_tampered_run(good_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(good_run, copy)
    artifact = next(p for p in sorted((copy / "artifacts").rglob("*")) if p.is_file())
    artifact.write_bytes(artifact.read_bytes() + b" ")
    verified = run_cli("verify", copy)
    inspected = run_cli("inspect", copy)
    assert verified.returncode == inspected.returncode == EXIT_EVIDENCE
    assert verified.stdout == inspected.stdout
    assert artifact.name in verified.stdout


def _not_a_run(kind: str, tmp_path: Path) -> Path:
    if kind == "empty-folder":
        tmp_path.joinpath("empty").mkdir()
        return tmp_path / "empty"
    if kind == "missing":
        return tmp_path / "absent"
    if kind == "a-file":
        (tmp_path / "file.txt").write_text("hello")
        return tmp_path / "file.txt"
    if kind == "spec-folder":
        return simple_spec(tmp_path / "suite").parent
    if kind == "foreign-manifest":
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "manifest.json").write_text(json.dumps({"schema": "npm/1"}))
        return tmp_path / "other"
    assert kind == "broken-manifest"
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_bytes(b"{not json")
    return tmp_path / "broken"


KINDS = ["empty-folder", "missing", "a-file", "spec-folder", "foreign-manifest", "broken-manifest"]


@pytest.mark.doc("docs/cli.md", "| 4 | evidence missing or tampered, or not a run directory;")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["verify", "inspect", "score", "gate"])
def test_not_a_run_is_one_line_and_exit_4(tmp_path: Path, kind: str, command: str) -> None:
    folder = _not_a_run(kind, tmp_path)
    proc = run_cli(command, folder)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr
    line = error_line(proc)
    assert str(folder) in line
    assert "not an assay run" in line
    assert proc.stdout == ""


@pytest.mark.doc(
    "docs/cli.md",
    "| `verify RUN` (alias `inspect`) | re-derive every digest; list each problem, naming the "
    "file and line;",
    "`verify`: every digest matches",
)
def test_verify_lists_each_problem_naming_the_file_and_line(good_run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(good_run, copy)
    bundles = (copy / "bundles.jsonl").read_bytes().splitlines(keepends=True)
    bundles[1] = bundles[1].replace(b'"state":"completed"', b'"state":"completeD"', 1)
    (copy / "bundles.jsonl").write_bytes(b"".join(bundles))
    scores = (copy / "scores.jsonl").read_bytes().splitlines(keepends=True)
    scores[2] = scores[2].replace(b'"status":"passed"', b'"status":"failed"', 1)
    (copy / "scores.jsonl").write_bytes(b"".join(scores))

    proc = run_cli("verify", copy)
    assert proc.returncode == EXIT_EVIDENCE, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    problems = [line.removeprefix("  - ") for line in lines[1:]]
    assert lines[0] == f"{copy} does NOT verify: {len(problems)} problem(s)"
    assert all(line.startswith("  - ") for line in lines[1:])
    trial = json.loads(bundles[1])["trial"]["trial_id"]
    assert f"bundles.jsonl:2 (trial {trial}): digest does not match its content" in problems
    assert any(p.startswith("scores.jsonl:3: ") for p in problems), problems
    assert any(p.startswith("bundles.jsonl: digest ") for p in problems)  # the whole file too
    assert any(p.startswith("scores.jsonl: digest ") for p in problems)
