"""examples/tools: the tool-using task runs offline through the CLI, every tool call is
in its evidence, and ``verify`` and ``score`` pass on the run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import REPO, artifact_bytes, events_of, read_jsonl, run_cli

REF = f"{REPO / 'examples' / 'tools' / 'task.py'}@arithmetic_tools"


def test_the_example_runs_verifies_and_rescores(tmp_path: Path) -> None:
    done = run_cli("run", REF, "-T", "count=3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "includes: 3/3" in done.stdout
    [run_dir] = (tmp_path / "runs").iterdir()
    by_trial: dict[str, list[tuple[str, object]]] = {}
    for call in events_of(run_dir, "tool_call"):
        arguments = json.loads(artifact_bytes(run_dir, call["data"]["arguments"]))
        by_trial.setdefault(call["trial"], []).append((call["data"]["function"], arguments))
    # each trial: multiply the first two numbers, then add the third to the product
    assert sorted(by_trial.values(), key=repr) == [
        [("multiply", {"a": 11.0, "b": 3.0}), ("add", {"a": 33.0, "b": 0.0})],
        [("multiply", {"a": 12.0, "b": 4.0}), ("add", {"a": 48.0, "b": 7.0})],
        [("multiply", {"a": 13.0, "b": 5.0}), ("add", {"a": 65.0, "b": 14.0})],
    ]
    answers = {
        artifact_bytes(run_dir, r["data"]["result"]) for r in events_of(run_dir, "tool_result")
    }
    assert {b"33.0", b"55.0", b"79.0"} <= answers
    assert {s["status"] for s in read_jsonl(run_dir / "scores.jsonl")} == {"passed"}
    assert run_cli("verify", run_dir).returncode == 0
    rescored = run_cli("score", run_dir)
    assert rescored.returncode == 0, rescored.stderr
