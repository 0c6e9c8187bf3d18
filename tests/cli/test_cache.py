"""``assay run --cache`` and ``assay cache list / clear / prune``, as real subprocesses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assay.errors import EXIT_CONFIG, EXIT_PASSED
from tests.helpers import error_line, run_cli, write_module

TASKS = """
from assay import Sample, Task, includes, task

@task
def quiz():
    return Task(
        dataset=[Sample(input=f"question {i}", target="four", id=f"s{i}") for i in range(3)],
        scorer=includes(),
    )
"""


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    write_module(tmp_path, "tasks", TASKS)
    return tmp_path, {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}


def run_quiz(folder: Path, env: dict[str, str], model: str, *extra: str) -> str:
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        model,
        "-M",
        "default_output=four",
        "--cache",
        *extra,
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return proc.stdout


def run_dir(stdout: str) -> Path:
    match = re.search(r"evidence and reports: (\S+)", stdout)
    assert match is not None, stdout
    return Path(match[1])


def test_a_cached_run_says_so_and_its_evidence_verifies_and_rescores(
    setup: tuple[Path, dict[str, str]],
) -> None:
    folder, env = setup
    first = run_quiz(folder, env, "mock/a")
    assert "3 calls (0 cached)" in first
    second = run_quiz(folder, env, "mock/a")
    assert "3 calls (3 cached)" in second
    path = folder / run_dir(second)
    for command in ("verify", "score"):
        proc = run_cli(command, path, cwd=folder, env=env)
        assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    report = json.loads((path / "report.json").read_text())
    assert report["usage"]["mock/a"]["cached_calls"] == 3


def test_list_filter_clear_and_prune(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    run_quiz(folder, env, "mock/b", "--cache-expiry", "12h")

    listed = run_cli("cache", "list", cwd=folder, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert sum(line.startswith("mock/a ") for line in lines) == 3
    assert sum(line.startswith("mock/b ") for line in lines) == 3
    assert any("expires 7d" in line for line in lines if line.startswith("mock/a"))
    assert all("expires 12h" in line for line in lines if line.startswith("mock/b"))
    assert lines[-1].startswith("6 entries")

    only_b = run_cli("cache", "list", "--model", "mock/b", cwd=folder, env=env)
    assert only_b.stdout.splitlines()[-1].startswith("3 entries")

    # expire the entries of mock/b by hand, then prune removes exactly those
    for entry in (folder / "cache").glob("??/*.json"):
        data = json.loads(entry.read_bytes())
        if data["model"] == "mock/b":
            data["expires"] = 1.0
            entry.write_text(json.dumps(data))
    pruned = run_cli("cache", "prune", cwd=folder, env=env)
    assert pruned.returncode == 0 and "removed 3 entries" in pruned.stdout

    cleared = run_cli("cache", "clear", "--model", "mock/*", cwd=folder, env=env)
    assert cleared.returncode == 0 and "removed 3 entries" in cleared.stdout
    empty = run_cli("cache", "list", cwd=folder, env=env)
    assert empty.stdout.startswith("0 entries")


def test_clear_everything_and_an_explicit_folder(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    run_quiz(folder, env, "mock/a")
    proc = run_cli("cache", "clear", "--dir", folder / "cache", cwd=folder)
    assert proc.returncode == 0 and "removed 3 entries" in proc.stdout


def test_bad_options_are_one_line_and_exit_2(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "--cache",
        "--cache-expiry",
        "soon",
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_CONFIG
    assert "cache expiry 'soon'" in error_line(proc)

    prices = folder / "prices.yaml"
    prices.write_text("mock/a: [1, 2]\n")
    proc = run_cli("run", "tasks.py@quiz", "-m", "mock/a", "--prices", prices, cwd=folder, env=env)
    assert proc.returncode == EXIT_CONFIG
    assert "price file" in error_line(proc)


def test_cache_with_a_yaml_spec_is_refused(tmp_path: Path) -> None:
    from tests.helpers import simple_spec

    proc = run_cli("run", simple_spec(tmp_path / "suite"), "--cache", "-o", tmp_path / "out")
    assert proc.returncode == EXIT_CONFIG
    assert "Python tasks" in error_line(proc)
    assert not (tmp_path / "out").exists()


def test_prices_from_a_file_reach_the_closing_line(setup: tuple[Path, dict[str, str]]) -> None:
    folder, env = setup
    prices = folder / "prices.yaml"
    prices.write_text("mock/a: {input: 1000000, output: 1000000}\n")
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        "--prices",
        prices,
        cwd=folder,
        env=env,
    )
    assert proc.returncode == EXIT_PASSED, proc.stderr
    # three calls of two input words and one output word, at $1 a token
    assert "3 calls (0 cached), 6 input + 3 output tokens, cost $9.0000" in proc.stdout
    proc = run_cli(
        "run",
        "tasks.py@quiz",
        "-m",
        "mock/a",
        "-M",
        "default_output=four",
        cwd=folder,
        env={**env, "ASSAY_PRICES": str(prices)},
    )
    assert "cost $9.0000" in proc.stdout
