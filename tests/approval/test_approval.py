"""Tool-call approval (``assay.approval``) used as an Inspect user uses it: policies on a
Task (or on ``eval``) approve, reject, modify, terminate or escalate the calls of a
scripted model (tests/approval/approval_task.py); every decision is an ``approval``
event under its ``tool_call``; ``verify`` passes and re-scoring gives the same scores."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from assay._registry import registry_info
from assay.approval import Approval, ApprovalPolicy, auto_approver, human_approver
from assay.errors import ConfigError
from assay.evidence import verify_run
from assay.pipeline import eval as run_eval
from assay.pipeline import rescore_run
from assay.pipeline._task_prepare import rebuild_frozen
from assay.spec import EvalSpec
from tests.helpers import (
    artifact_bytes,
    bundles_by_sample,
    events_of,
    read_jsonl,
    run_cli,
    run_task_copy,
    states_by_sample,
)

TASK_FILE = Path(__file__).with_name("approval_task.py")


def run_policy(tmp_path: Path, policy: str) -> tuple[Path, ModuleType]:
    """Run a fresh copy of the task with the approval policies named *policy*."""
    return run_task_copy(TASK_FILE, "approval_task", tmp_path, policy=policy)


def run_with_eval_policy(
    task_file: Path, task_name: str, folder: Path, approval: list[ApprovalPolicy], **args: Any
) -> tuple[Path, ModuleType]:
    """Run a fresh copy of *task_file*'s task through ``eval(..., approval=...)``."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / task_file.name
    copy.write_bytes(task_file.read_bytes())
    (result,) = run_eval(
        f"{copy}@{task_name}", approval=approval, task_args=args, log_dir=folder / "runs"
    )
    assert result.status == "success", result.error
    assert result.path is not None
    module = next(m for m in sys.modules.values() if getattr(m, "__file__", None) == str(copy))
    return result.path, module


def tool_text(state: dict[str, Any]) -> list[str]:
    return [m["content"] for m in state["messages"] if m["role"] == "tool"]


def decisions(run: Path) -> dict[str, list[tuple[str, str, str | None]]]:
    """Each sample's approval events: (decision, approver, explanation), in order."""
    sample_of = {e["trial"]: e["data"]["sample_id"] for e in events_of(run, "trial_started")}
    found: dict[str, list[tuple[str, str, str | None]]] = {}
    for event in events_of(run, "approval"):
        data = event["data"]
        entry = (data["decision"], data["approver"], data["explanation"])
        found.setdefault(sample_of[event["trial"]], []).append(entry)
    return found


@pytest.mark.doc(
    "docs/evidence.md",
    "`approval` (an approver's decision about a tool call, under its `tool_call`",
)
def test_approved_calls_run_and_each_decision_is_an_event_under_its_call(
    tmp_path: Path,
) -> None:
    run, module = run_policy(tmp_path, "approve")
    assert sorted(module.CALLS) == sorted(
        [("add", (2, 3)), ("delete_files", "/"), ("add", (1, 1)), ("add", (1, 5))]
    )
    approve = ("approve", "auto", "Automatic decision.")
    assert decisions(run) == {"add": [approve], "delete": [approve, approve], "add_one": [approve]}
    calls = {(e["trial"], e["n"]): e["data"]["id"] for e in events_of(run, "tool_call")}
    for event in events_of(run, "approval"):
        assert calls[(event["trial"], event["parent"])] == event["data"]["id"]
    assert states_by_sample(run)["add"]["output"]["message"]["content"] == "done: 5"
    assert verify_run(run).ok


def test_no_policies_means_no_approval_events(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "none")
    assert len(module.CALLS) == 4
    assert events_of(run, "approval") == []


def test_a_rejected_call_does_not_run_and_the_model_is_told(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "reject")
    assert ("delete_files", "/") not in module.CALLS
    assert ("add", (1, 1)) in module.CALLS  # the next call of the same turn still runs
    delete = states_by_sample(run)["delete"]
    assert tool_text(delete) == ["Error: Tool call rejected: Automatic decision.", "2"]
    errors = [e["data"]["error"] for e in events_of(run, "tool_result")]
    assert errors.count("rejected") == 1
    assert decisions(run)["delete"][0] == ("reject", "auto", "Automatic decision.")
    assert verify_run(run).ok


@pytest.mark.doc(
    "docs/cli.md",
    "Each decision of the task's approval policies about a call is shown above its result "
    "as `approval DECISION by APPROVER: explanation`.",
)
def test_show_trial_shows_each_decision_above_its_result(tmp_path: Path) -> None:
    run, _ = run_policy(tmp_path, "reject")
    trial = bundles_by_sample(run)["delete"]["trial"]["trial_id"]
    shown = run_cli("show", run, "--trial", trial)
    assert shown.returncode == 0, shown.stderr
    lines = [line.strip() for line in shown.stdout.splitlines()]
    turn = lines[lines.index("turn 1") : lines.index("turn 2")]
    assert turn == [
        "turn 1",
        'call delete_files({"path": "/"})',
        'call add({"x": 1, "y": 1})',
        "approval reject by auto: Automatic decision.",
        "result delete_files (rejected): Error: Tool call rejected: Automatic decision.",
        "approval approve by auto: Automatic decision.",
        "result add: 2",
    ]


def test_a_modified_call_runs_as_the_approver_changed_it(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "modify")
    assert ("add", (4, 3)) in module.CALLS and ("add", (2, 3)) not in module.CALLS
    assert tool_text(states_by_sample(run)["add"]) == ["7"]
    add_trial = bundles_by_sample(run)["add"]["trial"]["trial_id"]
    (event,) = [  # every sample's first call is call_0_0: the "add" sample's, whatever
        e  # order the trials' events reached the log in
        for e in events_of(run, "approval")
        if e["trial"] == add_trial and e["data"]["id"] == "call_0_0"
    ]
    assert event["data"]["approver"] == "doubling"
    assert event["data"]["function"] == "add"
    assert json.loads(artifact_bytes(run, event["data"]["arguments"])) == {"x": 4, "y": 3}
    # the approver is shown the call as Inspect shows it, and the conversation so far
    assert ("add", "```\nadd(x=2, y=3)\n```", 2) in module.SEEN
    # a call no policy matches is rejected, as Inspect does
    delete = states_by_sample(run)["delete"]
    assert (
        tool_text(delete)[0]
        == "Error: Tool call rejected: No approvers registered for tool delete_files"
    )
    assert verify_run(run).ok


def test_terminate_ends_the_sample_without_running_the_call(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "terminate")
    assert ("delete_files", "/") not in module.CALLS
    assert ("add", (1, 1)) not in module.CALLS  # the turn's later calls never run
    delete = states_by_sample(run)["delete"]
    assert [m["role"] for m in delete["messages"]] == ["user", "assistant", "tool"]
    assert tool_text(delete) == ["Error: Tool call terminated the sample: Automatic decision."]
    assert delete["completed"] is True
    assert decisions(run)["delete"] == [("terminate", "auto", "Automatic decision.")]
    assert states_by_sample(run)["add"]["output"]["message"]["content"] == "done: 5"
    assert verify_run(run).ok


def test_escalate_hands_the_call_to_the_next_matching_policy(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "escalate")
    found = decisions(run)
    assert found["add"] == [("approve", "auto", "Automatic decision.")]  # 2nd glob missed
    assert found["add_one"] == [("reject", "auto", "Automatic decision.")]  # add(x=1...
    assert ("add", (2, 3)) in module.CALLS and ("add", (1, 5)) not in module.CALLS
    assert verify_run(run).ok


def test_eval_approval_wins_over_the_task_and_is_in_the_spec_digest(tmp_path: Path) -> None:
    approve, _ = run_policy(tmp_path / "task", "approve")
    policy = [ApprovalPolicy(auto_approver("reject"), ["add", "delete_files"])]
    rejecting, _ = run_with_eval_policy(TASK_FILE, "approval_task", tmp_path / "eval", policy)
    rejected = decisions(rejecting)
    assert {d[0] for ds in rejected.values() for d in ds} == {"reject"}
    specs = [json.loads((run / "spec.json").read_text()) for run in (approve, rejecting)]
    assert specs[0]["targets"][0]["approval"] == [
        {"approver": "auto", "tools": "*", "args": {"decision": "approve"}}
    ]
    assert specs[1]["targets"][0]["approval"] == [
        {"approver": "auto", "tools": ["add", "delete_files"], "args": {"decision": "reject"}}
    ]
    # the spec's digest binds the policies: the run's record of them cannot be edited
    assert verify_run(approve).ok
    spec_file = approve / "spec.json"
    spec_file.write_text(spec_file.read_text().replace('"approve"}', '"reject"}'))
    assert specs[0] != json.loads(spec_file.read_text())
    assert not verify_run(approve).ok


def test_verify_and_rescoring_reproduce_a_run_with_decisions(tmp_path: Path) -> None:
    run, module = run_policy(tmp_path, "reject")
    ran = len(module.CALLS)
    before = (run / "scores.jsonl").read_bytes()
    assert rescore_run(run).differing == []
    assert len(module.CALLS) == ran
    assert (run / "scores.jsonl").read_bytes() == before
    proc = run_cli("verify", run)
    assert proc.returncode == 0, proc.stderr


def test_human_approver_refuses_in_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        human_approver()
    assert "unattended" in str(caught.value)
    assert "auto_approver" in caught.value.hint


def test_a_policy_that_is_not_one_is_refused() -> None:
    from assay import Task

    with pytest.raises(ConfigError) as caught:
        Task(approval=[auto_approver()])
    assert "ApprovalPolicy" in str(caught.value)


def test_a_task_asking_for_a_human_approver_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    copy = tmp_path / TASK_FILE.name
    copy.write_bytes(TASK_FILE.read_bytes())
    repo = Path(__file__).resolve().parents[2]  # the task file imports tests.scripted_tools
    proc = run_cli("run", f"{copy}@approval_task", "-T", "policy=human", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "human_approver() cannot be used" in line and "Traceback" not in proc.stderr


def test_an_agent_loop_stops_when_an_approver_terminates(tmp_path: Path) -> None:
    agent_file = Path(__file__).parents[1] / "agent" / "agent_task.py"
    policy = [
        ApprovalPolicy(auto_approver("terminate"), "add"),
        ApprovalPolicy(auto_approver(), "*"),
    ]
    run, module = run_with_eval_policy(agent_file, "agent_task", tmp_path, policy, only="submit")
    assert module.CALLS == []  # add was never run, and no later turn happened
    (state,) = states_by_sample(run).values()
    assert [m["role"] for m in state["messages"]][-2:] == ["assistant", "tool"]
    assert state["messages"][-1]["content"].startswith("Error: Tool call terminated the sample")
    assert events_of(run, "agent_submission") == []
    assert verify_run(run).ok


def test_resume_makes_the_eval_policies_again_from_the_spec(tmp_path: Path) -> None:
    policy = [ApprovalPolicy(auto_approver("reject"), "add")]
    run, _ = run_with_eval_policy(TASK_FILE, "approval_task", tmp_path / "a", policy)
    spec = msgspec.json.decode((run / "spec.json").read_bytes(), type=EvalSpec)
    prepared = rebuild_frozen(spec)  # what resume and a cluster's workers do
    assert prepared.spec == spec  # the same digest: the eval's policy, not the task's
    (target,) = prepared.targets.values()
    assert [(p.tools, registry_info(p.approver)) for p in target.approval] == [
        ("add", registry_info(policy[0].approver))
    ]

    async def unregistered(*args: Any) -> Approval:
        return Approval(decision="approve")

    policy = [ApprovalPolicy(unregistered, "*")]
    run, _ = run_with_eval_policy(TASK_FILE, "approval_task", tmp_path / "b", policy)
    spec = msgspec.json.decode((run / "spec.json").read_bytes(), type=EvalSpec)
    with pytest.raises(ConfigError) as caught:
        rebuild_frozen(spec)
    assert "cannot be made again" in str(caught.value)


def test_a_scorer_s_tool_calls_go_through_the_policies(tmp_path: Path) -> None:
    """A scorer that calls tools itself is held to the task's approval policies, as the
    solver is: the call the policy rejects does not run, each decision is an
    ``approval`` event under its call, and re-scoring gives the same scores."""
    run, module = run_task_copy(
        TASK_FILE, "approval_task", tmp_path, policy="reject", scorer_tools=True
    )
    assert ("delete_files", "/scored") not in module.CALLS
    assert module.CALLS.count(("add", (10, 1))) == 3  # one per sample's scoring
    scores = read_jsonl(run / "scores.jsonl")
    assert [s["reason"] for s in scores] == [
        "Error: Tool call rejected: Automatic decision. | 11"
    ] * 3
    assert {s["status"] for s in scores} == {"passed"}
    scored = events_of(run, "score_approval")  # a scorer's events are ``score_*``
    assert sorted((e["data"]["id"], e["data"]["decision"]) for e in scored) == sorted(
        [("score_0", "reject"), ("score_1", "approve")] * 3
    )
    calls = {(e["trial"], e["n"]): e["data"]["id"] for e in events_of(run, "score_tool_call")}
    assert all(calls[(e["trial"], e["parent"])] == e["data"]["id"] for e in scored)
    assert verify_run(run).ok
    assert rescore_run(run).differing == []
    assert ("delete_files", "/scored") not in module.CALLS  # nor when scored again


def test_re_scoring_holds_a_scorer_to_the_eval_s_policies_not_the_task_s(tmp_path: Path) -> None:
    """An eval's ``approval=`` wins over the task's own policies for the scorers' tool
    calls, when the run is scored and again when ``assay score`` re-scores it."""
    copy = tmp_path / TASK_FILE.name
    copy.write_bytes(TASK_FILE.read_bytes())
    args = {"policy": "approve", "scorer_tools": True}  # the task's own: approve all
    reject = _task_module(TASK_FILE).policies("reject")  # the task file's own names
    (result,) = run_eval(
        f"{copy}@approval_task",
        task_args=args,
        log_dir=tmp_path / "runs",
        approval=reject,
    )
    assert result.status == "success", result.error
    assert result.path is not None
    module = next(
        m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(copy)
    )
    assert ("delete_files", "/scored") not in module.CALLS
    assert rescore_run(result.path).differing == []
    assert ("delete_files", "/scored") not in module.CALLS  # nor when scored again


def _task_module(path: Path) -> Any:
    """The module of the task file at *path*, loaded on its own (for its helpers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("approval_task_helpers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
