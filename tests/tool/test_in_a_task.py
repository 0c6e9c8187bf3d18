"""The built-in tools inside a real Python task, run through ``eval`` and the CLI with
the mock model scripted to call them (tests/tool/sandbox_task.py), in real bwrap and
local sandboxes: what each call answered, the evidence, and re-scoring running nothing."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import verify_run
from assay.pipeline import rescore_run
from tests.helpers import (
    artifact_bytes,
    bundles_by_sample,
    events_of,
    read_jsonl,
    run_cli,
    run_dirs,
    run_task_copy,
    state_of,
    states_by_sample,
)
from tests.sandbox._support import no_host_process_with

TASK_FILE = Path(__file__).with_name("sandbox_task.py")
UID = {"bwrap": 65534, "local": os.geteuid()}


def run_task(tmp_path: Path, provider: str, **more: Any) -> Path:
    task_args = {"provider": provider, "uid": UID[provider], **more}
    return run_task_copy(TASK_FILE, "sandbox_task", tmp_path, **task_args)[0]


def tool_answers(run: Path) -> dict[str, list[str]]:
    return {
        sid: [m["content"] for m in state["messages"] if m["role"] == "tool"]
        for sid, state in states_by_sample(run).items()
    }


@pytest.mark.parametrize("provider", ["bwrap", "local"])
def test_a_scripted_model_uses_every_tool_in_the_sample_s_sandbox(
    tmp_path: Path, provider: str
) -> None:
    run = run_task(tmp_path, provider)
    answers = tool_answers(run)
    created, thought, inserted, ran = answers["write_then_run"]
    assert created == "File created successfully at: calc.py"
    assert thought == ""
    assert inserted.startswith("The file calc.py has been edited.")
    assert ran == "42\n"  # bash ran the file the editor wrote, in the same sandbox
    assert answers["python"] == ["1024\n"]
    # each sample has a sandbox of its own: this one's work folder is empty
    assert answers["who"] == [f"{UID[provider]}\n"]
    assert answers["fails"] == ["Error: the command exited with code 3. Its output:\nnope\n\n"]
    assert answers["too_slow"][0].startswith("Error: the command timed out after 5 s")
    assert answers["no_match"] == ["Error: The path x does not exist. Please provide a valid path."]
    statuses = {s["sample_id"]: s["status"] for s in read_jsonl(run / "scores.jsonl")}
    assert statuses == dict.fromkeys(answers, "passed")


def test_the_evidence_holds_every_call_and_answer_and_rescoring_runs_no_tool(
    tmp_path: Path,
) -> None:
    run = run_task(tmp_path, "bwrap")
    assert verify_run(run).ok
    sample_of = {e["trial"]: e["data"]["sample_id"] for e in events_of(run, "trial_started")}
    calls: dict[str, list[dict[str, Any]]] = {}
    for event in events_of(run, "tool_call"):
        arguments = json.loads(artifact_bytes(run, event["data"]["arguments"]))
        calls.setdefault(sample_of[event["trial"]], []).append(
            {"function": event["data"]["function"], **arguments}
        )
    assert calls["write_then_run"][1] == {
        "function": "think",
        "thought": "append the print, then run it",
    }  # the thought is in the evidence, though the tool answered nothing
    errors = {sample_of[e["trial"]]: e["data"]["error"] for e in events_of(run, "tool_result")}
    assert errors["fails"] == errors["too_slow"] == errors["no_match"] == "tool_error"
    assert errors["python"] is None and errors["who"] is None

    scores_before = (run / "scores.jsonl").read_bytes()
    rescored = rescore_run(run)  # no sandbox is bound here: a tool run would fail
    assert rescored.differing == []
    assert (run / "scores.jsonl").read_bytes() == scores_before


def test_the_cli_runs_the_task_and_exits_0(tmp_path: Path) -> None:
    copy = tmp_path / "sandbox_task.py"
    shutil.copy(TASK_FILE, copy)
    logs = tmp_path / "runs"
    proc = run_cli("run", f"{copy}@sandbox_task", "--log-dir", logs, "-T", "provider=bwrap")
    assert proc.returncode == 0, proc.stderr
    (run,) = run_dirs(logs)
    assert tool_answers(run)["write_then_run"][-1] == "42\n"


@pytest.mark.parametrize("provider", ["bwrap", "local"])
def test_the_trial_s_time_limit_ends_a_command_with_no_timeout_and_all_it_started(
    tmp_path: Path, provider: str
) -> None:
    marker = f"assay-forever-{secrets.token_hex(6)}"
    run = run_task(tmp_path, provider, forever=marker, time_limit=3)
    (call,) = events_of(run, "tool_call")
    assert call["data"]["function"] == "bash"
    assert events_of(run, "tool_result") == []  # cut off while the command ran
    (bundle,) = bundles_by_sample(run).values()
    assert bundle["observation"]["outcome"] == "answered"  # a limit is not an error
    assert state_of(run, bundle)["limit"] == "time"
    assert no_host_process_with(marker)
