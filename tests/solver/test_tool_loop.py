"""``generate`` with tools, through ``eval`` and the mock model scripted to call them
(tests/solver/tool_task.py): the loop and its modes, what the model is told when a call
is bad, a tool's exceptions, a message limit cutting the loop, and the evidence (every
call and result as events; ``verify`` passes; re-scoring gives the same scores and runs
no tool)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.evidence import verify_run
from assay.pipeline import rescore_run
from tests.helpers import (
    artifact_bytes,
    events_of,
    log_events,
    read_jsonl,
    run_cli,
    run_task_copy,
    state_of,
    states_by_sample,
)

TASK_FILE = Path(__file__).with_name("tool_task.py")


def run_tools(tmp_path: Path, **task_args: Any) -> tuple[Path, ModuleType]:
    """Run a fresh copy of the tool task with *task_args*; its run and its module."""
    return run_task_copy(TASK_FILE, "tools_task", tmp_path, **task_args)


states = states_by_sample


def model_calls(run: Path) -> list[dict[str, Any]]:
    """The model's calls (the target-level ``sampling`` event names no model)."""
    return [e for e in events_of(run, "sampling") if "model" in e["data"]]


def tool_text(state: dict[str, Any]) -> list[str]:
    return [m["content"] for m in state["messages"] if m["role"] == "tool"]


def test_the_loop_runs_each_call_and_asks_again_until_the_model_answers(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path)
    by_sample = states(run)

    summed = by_sample["sum"]
    assert [m["role"] for m in summed["messages"]] == ["user", "assistant", "tool", "assistant"]
    call, answer = summed["messages"][1], summed["messages"][2]
    assert call["tool_calls"] == [
        {"id": "call_0_0", "function": "add", "arguments": {"x": 2, "y": 3}}
    ]
    assert answer == {"role": "tool", "content": "5", "tool_call_id": "call_0_0"}
    assert summed["output"]["message"]["content"] == "done: 5"
    assert [t["name"] for t in summed["tools"]] == ["add", "divide"]
    assert summed["tool_choice"] == "auto"

    assert tool_text(by_sample["two_rounds"]) == ["5", "15"]
    assert by_sample["two_rounds"]["output"]["message"]["content"] == "done: 15"
    # two calls in one answer: run in the order given, each answered by its id
    parallel = [m for m in by_sample["parallel"]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in parallel] == [
        ("call_0_0", "2"),
        ("call_0_1", "4.5"),
    ]
    ran = sorted(c for c in module.CALLS if c[0] == "add")
    assert ran == sorted([("add", (2, 3)), ("add", (2, 3)), ("add", (5, 10)), ("add", (1, 1))])
    statuses = {s["sample_id"]: s["status"] for s in read_jsonl(run / "scores.jsonl")}
    assert set(statuses.values()) == {"passed"}, statuses


def test_a_bad_call_is_told_to_the_model_not_raised(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path)
    by_sample = states(run)
    expected = {
        "bad_args": "Error: invalid arguments to add: Expected `int`, got `str` - at `$.x`",
        "missing_arg": "Error: invalid arguments to add: Object missing required field `y`",
        "raw_args": "Error: the arguments are not a JSON object: {x: 2",
        "unknown": "Error: there is no tool named 'subtract' (tools: add, divide)",
        "tool_error": "Error: cannot divide by zero",
    }
    for sample_id, text in expected.items():
        state = by_sample[sample_id]
        assert tool_text(state) == [text], sample_id
        # the model saw it and answered: the trial went on
        assert state["output"]["message"]["content"] == f"done: {text}"
    # a call that did not fit never reached the function
    assert ("add", ("two", 3)) not in module.CALLS
    assert not any(c == ("add", (2,)) for c in module.CALLS)
    assert ("divide", (1.0, 0.0)) in module.CALLS  # a ToolError comes from inside the tool
    sample_of = {e["trial"]: e["data"]["sample_id"] for e in events_of(run, "trial_started")}
    kinds = {sample_of[e["trial"]]: e["data"]["error"] for e in events_of(run, "tool_result")}
    assert {s: kinds[s] for s in expected} == {
        "bad_args": "arguments",
        "missing_arg": "arguments",
        "raw_args": "arguments",
        "unknown": "unknown_tool",
        "tool_error": "tool_error",
    }
    assert kinds["sum"] is None


def test_each_call_and_result_is_an_event_with_its_payloads_as_artifacts(tmp_path: Path) -> None:
    run, _ = run_tools(tmp_path, only="tool_error")
    (call,) = events_of(run, "tool_call")
    (result,) = events_of(run, "tool_result")
    assert call["data"]["function"] == "divide" and call["data"]["id"] == "call_0_0"
    assert json.loads(artifact_bytes(run, call["data"]["arguments"])) == {"x": 1, "y": 0}
    assert result["data"]["error"] == "tool_error"
    assert artifact_bytes(run, result["data"]["result"]) == b"Error: cannot divide by zero"
    # the events sit between the model call that asked and the one that read the answer
    order = [e["type"] for e in log_events(run) if e["trial"] == call["trial"]]
    asked = {e["n"] for e in model_calls(run)}
    numbers = [e["n"] for e in log_events(run) if e["trial"] == call["trial"]]
    calls_at = [i for i, n in enumerate(numbers) if n in asked]
    assert calls_at[0] < order.index("tool_call") < order.index("tool_result") < calls_at[1]
    # the second model call was shown the tools and the tool's answer
    second = model_calls(run)[1]["data"]["prompt"]
    prompt = json.loads(artifact_bytes(run, second))
    assert [t["name"] for t in prompt["tools"]] == ["add", "divide"]
    assert prompt["messages"][-1]["content"] == "Error: cannot divide by zero"
    assert prompt["config"]["tool_choice"] == "auto"


def test_single_runs_one_round_and_none_runs_no_tool(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path / "single", tool_calls="single", only="two_rounds")
    state = states(run)["two_rounds"]
    assert [m["role"] for m in state["messages"]] == ["user", "assistant", "tool"]
    assert state["output"]["message"]["tool_calls"][0]["function"] == "add"
    assert module.CALLS == [("add", (2, 3))]
    assert len(model_calls(run)) == 1

    run, module = run_tools(tmp_path / "none", tool_calls="none", only="two_rounds")
    state = states(run)["two_rounds"]
    assert [m["role"] for m in state["messages"]] == ["user", "assistant"]
    assert state["output"]["message"]["tool_calls"][0]["arguments"] == {"x": 2, "y": 3}
    assert module.CALLS == []
    assert events_of(run, "tool_call") == []


def test_a_forced_tool_is_forced_on_the_first_call_only(tmp_path: Path) -> None:
    run, _ = run_tools(tmp_path, tool_choice="add", only="sum")
    choices = [
        json.loads(artifact_bytes(run, e["data"]["prompt"]))["config"]["tool_choice"]
        for e in model_calls(run)
    ]
    assert choices == ["add", "auto"]
    assert states(run)["sum"]["tool_choice"] == "add"


def test_an_exception_in_a_tool_fails_the_trial_and_is_recorded(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path, only="broken", with_broken=True)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    assert bundle["observation"]["outcome"] == "error"
    assert "raised RuntimeError: the tool itself is broken" in json.dumps(bundle)
    (result,) = events_of(run, "tool_result")
    assert result["data"]["error"] == "raised"
    assert result["data"]["result"] is None
    assert result["data"]["detail"] == "RuntimeError: the tool itself is broken"
    assert module.CALLS == [("broken", 1)]
    assert verify_run(run).ok


def test_a_message_limit_cuts_a_tool_loop_off_and_the_trial_is_scored(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path, only="forever", message_limit=6)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    assert bundle["observation"]["outcome"] == "answered"
    state = state_of(run, bundle)
    assert state["limit"] == "message"
    assert len(state["messages"]) <= 6
    assert [m["role"] for m in state["messages"]][:5] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert len(module.CALLS) == len(tool_text(state))  # no tool ran past the limit
    (score,) = read_jsonl(run / "scores.jsonl")
    assert score["status"] == "failed"  # scored on the state it reached, not an error


def test_a_time_limit_does_not_wait_for_a_sync_tool(tmp_path: Path) -> None:
    run, module = run_tools(tmp_path, only="nap", time_limit=0.3)
    assert module.CALLS == [("nap", 10)]  # the tool still sleeps in its worker thread
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    state = state_of(run, bundle)
    assert state["limit"] == "time"
    assert state["messages"][-1]["tool_calls"][0]["function"] == "nap"  # asked, never answered
    (score,) = read_jsonl(run / "scores.jsonl")
    assert score["status"] == "failed"
    assert verify_run(run).ok


def test_verify_passes_and_rescoring_gives_the_same_scores_without_running_a_tool(
    tmp_path: Path,
) -> None:
    run, module = run_tools(tmp_path)
    assert verify_run(run).ok
    scores_before = (run / "scores.jsonl").read_bytes()
    ran = len(module.CALLS)
    rescored = rescore_run(run)
    assert rescored.differing == []
    assert rescored.scores == len(read_jsonl(run / "scores.jsonl"))
    assert len(module.CALLS) == ran  # re-scoring read the states, it ran nothing
    assert (run / "scores.jsonl").read_bytes() == scores_before
    proc = run_cli("score", run)
    assert proc.returncode == 0, proc.stderr
