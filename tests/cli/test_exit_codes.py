"""Exit codes: 0 passed, 1 failed, 2 config, 3 inconclusive, 5 run could not go on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_PASSED,
    EXIT_RUN,
)
from tests.helpers import callable_spec, error_line, run_cli, simple_spec, write_module

FAST_RETRY = {"max_attempts": 2, "initial_backoff": 0.01, "max_backoff": 0.01}


def test_documented_values() -> None:
    assert (EXIT_PASSED, EXIT_FAILED, EXIT_CONFIG, EXIT_INCONCLUSIVE, EXIT_RUN) == (0, 1, 2, 3, 5)


def _run(spec: Path, out: Path) -> tuple[int, str, dict[str, object]]:
    proc = run_cli("run", spec, "--output", out)
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads((out / "report.json").read_text())
    return proc.returncode, proc.stdout, report


def test_passed_is_0(tmp_path: Path) -> None:
    code, stdout, report = _run(simple_spec(tmp_path / "suite"), tmp_path / "run")
    assert code == EXIT_PASSED
    assert "gate: passed" in stdout
    assert report["gate"]["status"] == "passed"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_PASSED


def test_failed_is_1(tmp_path: Path) -> None:
    spec = callable_spec(tmp_path / "suite", "def answer(text):\n    return 'wrong'\n")
    code, stdout, report = _run(spec, tmp_path / "run")
    assert code == EXIT_FAILED
    assert "gate: failed" in stdout
    assert report["gate"]["status"] == "failed"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_FAILED


def test_a_crashing_target_fails_it_is_not_retried_away(tmp_path: Path) -> None:
    """A product crash is a product result: failed (1), not inconclusive."""
    spec = callable_spec(
        tmp_path / "suite", "def answer(text):\n    raise ValueError('bug')\n", retry=FAST_RETRY
    )
    code, stdout, _ = _run(spec, tmp_path / "run")
    assert code == EXIT_FAILED, stdout


def test_blocked_trials_are_inconclusive_3(tmp_path: Path) -> None:
    spec = callable_spec(
        tmp_path / "suite",
        "def answer(text):\n    raise ConnectionError('connection refused')\n",
        retry=FAST_RETRY,
    )
    code, stdout, report = _run(spec, tmp_path / "run")
    assert code == EXIT_INCONCLUSIVE, stdout
    assert "gate: inconclusive" in stdout
    assert "blocked" in stdout
    assert report["gate"]["status"] == "inconclusive"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_INCONCLUSIVE


def test_one_blocked_target_makes_the_run_inconclusive(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    source = (
        "def good(text):\n    return text\n\n"
        "def down(text):\n    raise TimeoutError('upstream timed out')\n"
    )
    write_module(folder, "target_mod", source)
    spec = simple_spec(
        folder,
        targets=[
            {"id": "good", "callable": "target_mod:good"},
            {"id": "down", "callable": "target_mod:down"},
        ],
        retry=FAST_RETRY,
    )
    code, _, report = _run(spec, tmp_path / "run")
    assert code == EXIT_INCONCLUSIVE
    decisions = {d["target_id"]: d["status"] for d in report["gate"]["targets"]}  # type: ignore[index]
    assert decisions == {"good": "passed", "down": "inconclusive"}


def test_config_error_is_2_and_nothing_is_written(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite", repetitions=0)
    proc = run_cli("run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    error_line(proc)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "ref", ["nowhere:answer", "target_mod:missing", "target_mod", "target_mod:VALUE"]
)
def test_unloadable_callable_is_a_config_error(tmp_path: Path, ref: str) -> None:
    folder = tmp_path / "suite"
    callable_spec(folder, "VALUE = 3\n\ndef answer(text):\n    return text\n")
    spec = simple_spec(folder, targets=[{"id": "t", "callable": ref}])
    proc = run_cli("run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    line = error_line(proc)
    assert ref in line and "'t'" in line
    assert not (tmp_path / "run").exists()


def test_debug_shows_the_traceback_of_a_config_error(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite", gate={"minimum": 1.5})
    proc = run_cli("--debug", "run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ConfigError" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("assay: ")

    quiet = run_cli("run", spec, "--output", tmp_path / "run")
    assert quiet.returncode == EXIT_CONFIG
    assert error_line(quiet) == proc.stderr.splitlines()[-1]


def test_run_into_an_existing_run_refuses_with_5(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite")
    out = tmp_path / "run"
    assert run_cli("run", spec, "--output", out).returncode == EXIT_PASSED
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    again = run_cli("run", spec, "--output", out)
    assert again.returncode == EXIT_RUN
    line = error_line(again)
    assert str(out) in line and "already" in line

    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before, "the refused run must not touch the old one"
    assert run_cli("verify", out).returncode == 0


def test_run_into_an_existing_empty_folder_is_fine(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    assert run_cli("run", simple_spec(tmp_path / "suite"), "--output", out).returncode == 0
    assert (out / "manifest.json").exists()
