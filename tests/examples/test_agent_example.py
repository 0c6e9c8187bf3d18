"""examples/agent: react() with bash() and python() finds a code hidden in files placed in
each sample's bubblewrap sandbox, offline with the scripted model; the run's evidence
holds every command, ``verify`` and ``score`` pass, and ``show`` prints the transcript."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import REPO, artifact_bytes, events_of, read_jsonl, run_cli

REF = f"{REPO / 'examples' / 'agent' / 'task.py'}@hidden_code"


def test_the_agent_example_solves_every_sample_in_its_sandbox(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_cli("run", REF, "-T", "count=2", "-o", run, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "includes: 2/2" in done.stdout
    assert {s["status"] for s in read_jsonl(run / "scores.jsonl")} == {"passed"}

    calls: dict[str, list[str]] = {}
    for call in events_of(run, "tool_call"):
        calls.setdefault(call["trial"], []).append(call["data"]["function"])
    assert sorted(calls.values()) == [["bash", "python", "submit"]] * 2

    commands = [
        json.loads(artifact_bytes(run, e["data"]["command"]))
        for e in events_of(run, "sandbox_exec")
    ]
    assert ["bash", "-c", "grep -rh '^part:' notes/"] in commands
    assert ["python3", "-"] in commands
    placed = events_of(run, "sandbox_files")
    assert len(placed) == 2 and all(len(e["data"]["files"]) == 4 for e in placed)
    assert {e["data"]["provider"] for e in events_of(run, "sandbox_create")} == {"bwrap"}

    assert run_cli("verify", run).returncode == 0
    rescored = run_cli("score", run)
    assert rescored.returncode == 0, rescored.stderr
    trial = calls and next(iter(calls))
    shown = run_cli("show", run, "--trial", trial)
    assert shown.returncode == 0, shown.stderr
    assert "call bash(" in shown.stdout and "call submit(" in shown.stdout
    assert shown.stdout.count("ran in sandbox default: exit 0") == 2  # bash's and python's
