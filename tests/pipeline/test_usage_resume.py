"""Usage survives ``kill -9`` and ``assay resume``: a trial cut off after a model call is
re-run, its bundle lists the earlier call's event too, and its usage counts it; the
report's totals still equal the sum over every ``sampling`` event in the log."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from assay.errors import EXIT_PASSED, EXIT_RUN
from assay.evidence import checked_events
from assay.evidence._log import events_in
from tests.helpers import (
    error_line,
    log_events,
    read_jsonl,
    run_cli,
    start_cli,
    wait_for,
    whole_records,
    write_module,
)

TASKS = """
import os

import anyio

from assay import Sample, Task, includes, task


async def answer_then_wait(state, generate):
    state = await generate(state)
    while not os.path.exists(os.environ["GO_ON"]):
        await anyio.sleep(0.02)
    return state


@task
def waits():
    return Task(
        dataset=[Sample(input="what is two plus two", target="four", id="s0")],
        solver=answer_then_wait,
        scorer=includes(),
        cost_limit=1000.0,
    )
"""


def sampling_calls(run: Path) -> list[dict[str, object]]:
    return [e for e in log_events(run) if e["type"] == "sampling" and "model" in e["data"]]


def start_waiting_run(
    folder: Path, price: str
) -> tuple[subprocess.Popen[str], Path, dict[str, str]]:
    """``assay run tasks.py@waits`` in *folder*, priced by the one-line table *price*
    (through ASSAY_PRICES); its trial waits until ``go-on`` exists. The process, its
    log folder and the environment a resume needs again."""
    write_module(folder, "tasks", TASKS)
    prices = folder / "prices.yaml"
    prices.write_text(price + "\n")
    env = {"GO_ON": str(folder / "go-on"), "ASSAY_PRICES": str(prices)}
    log_dir = folder / "runs"
    args = ("tasks.py@waits", "-m", "mock/x", "-M", "default_output=four", "--log-dir", log_dir)
    return start_cli("run", *args, cwd=folder, env=env), log_dir, env


@pytest.mark.doc(
    "docs/evidence.md",
    "A trial that called a model also has `usage`: its `sampling` events summed",
    "An unfinished trial's earlier events stay in the log; its re-run continues their numbering",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "and by the run's flush every 0.2 s, so a long or waiting trial's events reach the log",
)
def test_a_resumed_trial_counts_the_calls_of_its_first_try(tmp_path: Path) -> None:
    proc, log_dir, env = start_waiting_run(tmp_path, "mock/x: {input: 1000000, output: 0}")

    def called() -> bool:
        runs = list(log_dir.glob("*/events.jsonl"))
        if not runs:
            return False
        logged = [e for line in whole_records(runs[0]) for e in events_in(line)]
        return any(e["type"] == "sampling" for e in logged)  # its batch written as it waits

    assert wait_for(called, timeout=60), proc.stderr
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (run,) = list(log_dir.iterdir())
    assert not (run / "bundles.jsonl").exists() or not read_jsonl(run / "bundles.jsonl")

    (tmp_path / "go-on").write_text("")
    resumed = run_cli("resume", run, cwd=tmp_path, env=env)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert run_cli("verify", run, cwd=tmp_path).returncode == EXIT_PASSED

    calls = sampling_calls(run)
    assert len(calls) == 2  # one before the kill, one in the re-run
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    listed = {e["n"] for e in checked_events(run, bundle)}  # in the lines it lists
    assert {e["n"] for e in calls} <= listed
    assert bundle["usage"]["calls"] == 2
    report = json.loads((run / "report.json").read_text())
    tokens = sum(e["data"]["usage"]["input_tokens"] for e in calls)  # type: ignore[index]
    assert report["usage_total"]["calls"] == 2
    assert report["usage_total"]["input_tokens"] == tokens
    # priced from ASSAY_PRICES both times: the frozen price matched, so resume went on
    assert report["usage_total"]["cost"] == tokens


@pytest.mark.doc(
    "docs/cli.md",
    "Give `resume` the file the run had, so the calls after the interrupt are priced alike (and a "
    "`cost_limit`'s frozen price matches again).",
)
def test_resume_refuses_a_cost_limited_run_whose_price_changed(tmp_path: Path) -> None:
    proc, log_dir, env = start_waiting_run(tmp_path, "mock/x: {input: 1, output: 1}")
    assert wait_for(lambda: any(log_dir.glob("*/manifest.json")), timeout=60), proc.stderr
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (run,) = list(log_dir.iterdir())
    (tmp_path / "prices.yaml").write_text("mock/x: {input: 2, output: 1}\n")  # a new price
    resumed = run_cli("resume", run, cwd=tmp_path, env=env)
    assert resumed.returncode == EXIT_RUN, resumed.stdout + resumed.stderr
    assert "targets" in error_line(resumed)
