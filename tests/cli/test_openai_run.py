"""``assay run file.py@task --model openai/NAME --model-base-url URL`` in a subprocess,
against the project's OpenAI-compatible server on 127.0.0.1: the run finishes, ``assay
verify`` passes on it, the API key set in the environment appears in no file of the
run directory (events, artifacts, packs, reports, spec) nor in the output, keys on the
command line are refused, and an interrupted run resumes against the same server."""

from __future__ import annotations

import re
import secrets
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    REPO,
    error_line,
    events_of,
    read_jsonl,
    run_cli,
    run_dirs,
    start_cli,
    wait_for,
)
from tests.servers.openai_compat import OpenAICompatServer, drop, ok, slow, status

ARITHMETIC = REPO / "examples" / "arithmetic" / "tasks.py"


def calculator(payload: dict[str, Any]) -> str:
    """Answer the arithmetic example's questions correctly."""
    found = re.search(r"(\d+) ([+*-]) (\d+)", payload["messages"][-1]["content"])
    if found is None:
        return "ANSWER: unknown"
    a, op, b = int(found[1]), found[2], int(found[3])
    return f"ANSWER: {a + b if op == '+' else a - b if op == '-' else a * b}"


def run_arithmetic(
    server: OpenAICompatServer, log_dir: Path, env: dict[str, str] | None = None, *extra: str
) -> Any:
    return run_cli(
        "run",
        f"{ARITHMETIC}@arithmetic",
        "-T",
        "count=6",
        "-T",
        "epochs=2",
        "--model",
        "openai/calc-1",
        "--model-base-url",
        server.url,
        "-M",
        "retry_backoff=0.01",
        "--log-dir",
        log_dir,
        *extra,
        env=env,
    )


def test_a_run_against_an_openai_compatible_server_verifies(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.reply = calculator
    openai_server.push(status(429, retry_after="0"), status(500), drop())
    proc = run_arithmetic(openai_server, tmp_path, {"OPENAI_API_KEY": ""})
    assert proc.returncode == 0, proc.stderr
    assert "== arithmetic × openai/calc-1: success" in proc.stdout
    assert "match: accuracy 1.0000" in proc.stdout
    (run,) = run_dirs(tmp_path)
    verified = run_cli("verify", run)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    bundles = read_jsonl(run / "bundles.jsonl")
    assert len(bundles) == 12 and {b["state"] for b in bundles} == {"completed"}
    reasons = sorted(e["data"]["reason"] for e in events_of(run, "model_call_failed"))
    assert reasons == ["connection", "http_500", "rate_limited"]
    assert len(openai_server.requests) == 12 + 3  # 6 samples × 2 epochs, and 3 retries
    assert {r.body["model"] for r in openai_server.requests} == {"calc-1"}


def test_the_api_key_reaches_the_server_and_no_file_of_the_run(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    openai_server.reply = calculator
    openai_server.api_key = key
    proc = run_arithmetic(openai_server, tmp_path, {"OPENAI_API_KEY": key})
    assert proc.returncode == 0, proc.stderr
    assert {r.authorization for r in openai_server.requests} == {f"Bearer {key}"}
    (run,) = run_dirs(tmp_path)
    files = [p for p in run.rglob("*") if p.is_file()]
    assert any(p.name.startswith("pack-") for p in files)  # the packs are searched too
    needle = key.encode()
    leaked = [str(p.relative_to(run)) for p in files if needle in p.read_bytes()]
    assert leaked == []
    assert key not in proc.stdout + proc.stderr


@pytest.mark.doc(
    "docs/cli.md",
    "A unit its errors stopped (its `fail_on_error` reached) is a stopped run: exit 5",
)
def test_a_wrong_key_is_an_error_that_names_the_status_not_the_key(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    openai_server.api_key = "sk-the-right-one"
    proc = run_arithmetic(openai_server, tmp_path, {"OPENAI_API_KEY": key}, "-j", "1")
    assert proc.returncode == 5, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.startswith("== arithmetic × openai/calc-1: error\n"), proc.stdout
    assert f"401 from {openai_server.url}: invalid key" in proc.stderr
    (gate,) = [line for line in proc.stdout.splitlines() if line.startswith("gate: ")]
    assert gate.startswith("gate: stopped: ") and "invalid key" in gate
    (run,) = run_dirs(tmp_path)
    # one trial at a time: the first asked once, was not retried, and stopped the run
    (failed,) = events_of(run, "model_call_failed")
    assert (failed["data"]["status"], failed["data"]["action"]) == (401, "stop")
    assert len(openai_server.requests) == 1
    assert not [p for p in run.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]


@pytest.mark.doc(
    "docs/cli.md",
    "`GenerateConfig` fields such as `timeout`, `max_retries`, `temperature` set the model's "
    "config; keys are refused)",
)
def test_a_key_on_the_command_line_is_refused(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    proc = run_arithmetic(openai_server, tmp_path, None, "-M", "api_key=sk-typed-in")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "-M api_key=..." in line and "OPENAI_API_KEY" in line
    assert "sk-typed-in" not in line
    assert openai_server.requests == []
    assert not tmp_path.exists() or run_dirs(tmp_path) == []


def test_a_bad_base_url_is_one_line(tmp_path: Path) -> None:
    proc = run_cli(
        "run", f"{ARITHMETIC}@arithmetic", "--model", "openai/x", "--model-base-url", "localhost"
    )
    assert proc.returncode == 2
    assert "is not an http(s) URL" in error_line(proc)


def test_a_key_in_a_header_argument_is_refused(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    header = "default_headers={Authorization: Bearer sk-in-a-header}"
    proc = run_arithmetic(openai_server, tmp_path, None, "-M", header)
    assert proc.returncode == 2
    line = error_line(proc)
    assert "Authorization" in line and "sk-in-a-header" not in line
    assert openai_server.requests == []


def test_an_interrupted_run_resumes_against_the_same_server(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    openai_server.reply = calculator
    openai_server.push(ok(), ok(), ok(), slow(60), slow(60))  # two trials hang
    args = ("--model", "openai/calc-1", "--model-base-url", openai_server.url, "-j", "2")
    ref = f"{ARITHMETIC}@arithmetic"
    proc = start_cli("run", ref, "-T", "count=3", "-T", "epochs=2", *args, "--log-dir", tmp_path)
    assert wait_for(lambda: len(openai_server.requests) >= 5, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (interrupted,) = run_dirs(tmp_path)
    resumed = run_cli("resume", interrupted)  # the spec names the server: no options needed
    assert resumed.returncode == 0, resumed.stderr
    assert len(openai_server.requests) == 5 + 3  # the unfinished three, asked again there
    assert run_cli("verify", interrupted).returncode == 0
    bundles = read_jsonl(interrupted / "bundles.jsonl")
    assert len(bundles) == 6 and {b["state"] for b in bundles} == {"completed"}


def test_a_run_chosen_by_openai_base_url_resumes_only_against_that_server(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    """The server a run answered from is in its spec however it was chosen (here only
    ``$OPENAI_BASE_URL``); resuming against another is refused before any call."""
    openai_server.reply = calculator
    openai_server.push(ok(), ok(), slow(60), slow(60))
    env = {"OPENAI_BASE_URL": openai_server.url}
    ref = f"{ARITHMETIC}@arithmetic"
    args = ("--model", "openai/calc-1", "-j", "2", "--log-dir", tmp_path)
    proc = start_cli("run", ref, "-T", "count=2", "-T", "epochs=2", *args, env=env)
    assert wait_for(lambda: len(openai_server.requests) >= 4, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (interrupted,) = run_dirs(tmp_path)
    spec = (interrupted / "spec.json").read_text()
    assert f'"endpoint":"{openai_server.url}"' in spec

    elsewhere = run_cli("resume", interrupted, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert elsewhere.returncode == 2, elsewhere.stderr
    line = error_line(elsewhere)
    assert openai_server.url in line and "http://127.0.0.1:9/v1" in line
    assert len(openai_server.requests) == 4, "nothing was asked of either server"

    resumed = run_cli("resume", interrupted, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert run_cli("verify", interrupted).returncode == 0


def model_calls(run: Path) -> list[dict[str, Any]]:
    """The data of the run's model calls (``sampling`` events naming a model)."""
    return [e["data"] for e in events_of(run, "sampling") if "model" in e["data"]]


@pytest.mark.doc(
    "docs/cli.md",
    "Give `resume` the file the run had, so the calls after the interrupt are priced alike (and a "
    "`cost_limit`'s frozen price matches again).",
)
def test_a_resume_prices_its_calls_with_the_price_file_it_is_given(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    """``--prices`` on ``resume`` (as on ``run``): the calls made after the interrupt are
    priced by the same table as those before it."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/calc-1: {input: 1.0, output: 2.0}\n")
    openai_server.reply = calculator
    openai_server.push(ok(), ok(), slow(60), slow(60))
    args = ("--model", "openai/calc-1", "--model-base-url", openai_server.url, "-j", "2")
    ref = f"{ARITHMETIC}@arithmetic"
    log_dir = tmp_path / "runs"
    proc = start_cli(
        "run",
        ref,
        "-T",
        "count=2",
        "-T",
        "epochs=2",
        *args,
        "--prices",
        prices,
        "--log-dir",
        log_dir,
    )
    assert wait_for(lambda: len(openai_server.requests) >= 4, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    (run,) = run_dirs(log_dir)
    before = len(model_calls(run))
    resumed = run_cli("resume", run, "--prices", prices)
    assert resumed.returncode == 0, resumed.stderr
    costs = [call["cost"] for call in model_calls(run)]
    assert len(costs) == 4 and len(costs) > before
    assert all(isinstance(cost, float) and cost > 0 for cost in costs), costs
    assert "cost unknown" not in resumed.stdout, resumed.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "`--model-base-url URL` (the OpenAI-compatible server, see [models.md](models.md)), "
    "`--max-connections N`",
)
def test_max_connections_bounds_the_calls_the_server_sees_at_once(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    """12 calls that each take 0.5 s at the server, 16 trials allowed in flight: with
    ``--max-connections 2`` the server never holds more than two at once."""
    openai_server.reply = calculator
    openai_server.latency = 0.5
    proc = run_arithmetic(openai_server, tmp_path, None, "--max-connections", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(openai_server.requests) == 12
    assert openai_server.max_in_flight == 2, openai_server.max_in_flight
