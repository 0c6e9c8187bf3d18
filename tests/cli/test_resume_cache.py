"""``assay resume`` and the response cache, as real subprocesses against a real
OpenAI-compatible server on 127.0.0.1: a run made with ``--cache`` records it in its
manifest and its resume answers already-cached calls without a request; ``--cache`` and
``--no-cache`` on ``resume`` override what the run did; a YAML run refuses ``--cache``."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_openai_run import ARITHMETIC, calculator
from tests.helpers import (
    SHIPPING,
    error_line,
    events_of,
    run_cli,
    run_dirs,
    run_spec_at,
    start_cli,
    wait_for,
)
from tests.servers.openai_compat import OpenAICompatServer, slow

EXIT_CONFIG = 2


def arithmetic(server: OpenAICompatServer, log_dir: Path, epochs: int, *extra: str) -> list[str]:
    """``assay run`` of three questions × *epochs*, one trial at a time, on *server*."""
    return [
        "run",
        f"{ARITHMETIC}@arithmetic",
        "-T",
        "count=3",
        "-T",
        f"epochs={epochs}",
        "--model",
        "openai/calc-1",
        "--model-base-url",
        server.url,
        "-j",
        "1",
        "--log-dir",
        str(log_dir),
        *extra,
    ]


def interrupted_run(
    server: OpenAICompatServer, tmp_path: Path, env: dict[str, str], *extra: str
) -> Path:
    """Fill the cache with epoch 1 of three questions, then start two epochs (with
    *extra*) and interrupt it at its first live call: epoch 2 of the first question.
    The unfinished trials then include epoch 1 of questions 2 and 3, both cached."""
    server.reply = calculator
    filled = run_cli(*arithmetic(server, tmp_path / "fill", 1, "--cache"), env=env)
    assert filled.returncode == 0, filled.stderr
    assert len(server.requests) == 3
    server.push(slow(60))  # the first live call of the next run hangs
    proc = start_cli(*arithmetic(server, tmp_path / "runs", 2, *extra), env=env)
    assert wait_for(lambda: len(server.requests) == 4, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (run,) = run_dirs(tmp_path / "runs")
    return run


def cached_calls(run: Path) -> list[dict[str, Any]]:
    return [e for e in events_of(run, "sampling") if e["data"].get("cached")]


@pytest.mark.doc(
    "docs/evidence.md",
    "A run made with the response cache says so in the manifest (`cache`) and is resumed with it",
)
@pytest.mark.doc(
    "docs/cli.md",
    'The run\'s manifest records it (`"cache": {"expiry": seconds}`), and `resume` then uses the '
    "cache again with that expiry; on `resume`, `--cache` / `--no-cache` and `--cache-expiry` "
    "override what the run did (the same option definitions as `run`'s).",
)
def test_a_resumed_cached_run_answers_cached_calls_without_a_request(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    env = {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    run = interrupted_run(openai_server, tmp_path, env, "--cache", "--cache-expiry", "12h")
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["cache"] == {"expiry": 12 * 3600}
    assert len(cached_calls(run)) == 1  # question 1, epoch 1, before the interrupt

    resumed = run_cli("resume", str(run), env=env)  # no option: as the run did
    assert resumed.returncode == 0, resumed.stderr
    # epoch 2 of each question asked; epoch 1 of questions 2 and 3 from the cache
    assert len(openai_server.requests) == 4 + 3
    assert len(cached_calls(run)) == 3
    assert json.loads((run / "manifest.json").read_text())["cache"] == {"expiry": 12 * 3600}
    assert "usage: 6 calls (3 cached)" in resumed.stdout
    assert run_cli("verify", str(run)).returncode == 0


@pytest.mark.doc(
    "docs/cli.md",
    'The run\'s manifest records it (`"cache": {"expiry": seconds}`), and `resume` then uses the '
    "cache again with that expiry; on `resume`, `--cache` / `--no-cache` and `--cache-expiry` "
    "override what the run did (the same option definitions as `run`'s).",
)
def test_resume_with_no_cache_asks_every_unfinished_call(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    env = {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    run = interrupted_run(openai_server, tmp_path, env, "--cache")
    bad = run_cli("resume", str(run), "--cache-expiry", "soon", env=env)
    assert bad.returncode == EXIT_CONFIG
    assert "cache expiry 'soon'" in error_line(bad)
    resumed = run_cli("resume", str(run), "--no-cache", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert len(openai_server.requests) == 4 + 5  # the five unfinished trials, all live
    assert len(cached_calls(run)) == 1
    assert "cache" not in json.loads((run / "manifest.json").read_text())


@pytest.mark.doc(
    "docs/cli.md",
    'The run\'s manifest records it (`"cache": {"expiry": seconds}`), and `resume` then uses the '
    "cache again with that expiry; on `resume`, `--cache` / `--no-cache` and `--cache-expiry` "
    "override what the run did (the same option definitions as `run`'s).",
)
def test_resume_with_cache_uses_it_for_a_run_made_without(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    env = {"ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    # without --cache the second run's first call is live: question 1, epoch 1, hangs
    openai_server.reply = calculator
    filled = run_cli(*arithmetic(openai_server, tmp_path / "fill", 1, "--cache"), env=env)
    assert filled.returncode == 0, filled.stderr
    openai_server.push(slow(60))
    proc = start_cli(*arithmetic(openai_server, tmp_path / "runs", 2), env=env)
    assert wait_for(lambda: len(openai_server.requests) == 4, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (run,) = run_dirs(tmp_path / "runs")
    assert "cache" not in json.loads((run / "manifest.json").read_text())

    resumed = run_cli("resume", str(run), "--cache", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert len(openai_server.requests) == 4 + 3  # epoch 1 of all three from the cache
    assert len(cached_calls(run)) == 3


@pytest.mark.doc(
    "docs/cli.md",
    "`--cache` on a YAML run (`run` or `resume`) is refused, exit 2.",
)
def test_resume_refuses_the_cache_for_a_yaml_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_spec_at(SHIPPING / "eval.yaml", run)
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    refused = run_cli("resume", str(run), "--cache")
    assert refused.returncode == EXIT_CONFIG
    assert "--cache" in error_line(refused)
