"""Approval policies from a file, as Inspect's ``inspect eval --approval approval.yaml``
and ``eval(approval="approval.yaml")``: approvers by registered name (built in, or an
``@approver`` of the task's file) with their tools globs and arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import Task
from assay.approval._apply import policies_record
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_PASSED
from assay.pipeline import eval as run_eval
from tests.approval.test_approval import TASK_FILE, decisions, tool_text
from tests.helpers import run_cli, states_by_sample

APPROVAL_YAML = """
approvers:
  - name: auto
    tools: "delete*"
    decision: reject
  - name: doubling
    tools: ["add"]
"""

REPO = Path(__file__).resolve().parents[2]  # the task file imports tests.scripted_tools


def copy_task(folder: Path) -> Path:
    copy = folder / TASK_FILE.name
    copy.write_bytes(TASK_FILE.read_bytes())
    return copy


@pytest.mark.doc(
    "docs/cli.md",
    "`--approval FILE` gives every task of the run the approval policies a YAML or JSON file lists",
)
def test_an_approval_file_on_the_command_line_decides_the_calls(tmp_path: Path) -> None:
    task = copy_task(tmp_path)
    (tmp_path / "approval.yaml").write_text(APPROVAL_YAML)
    proc = run_cli(
        *("run", f"{task}@approval_task", "-T", "policy=none"),
        *("--approval", tmp_path / "approval.yaml", "-o", tmp_path / "run"),
        cwd=REPO,
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    run = tmp_path / "run"
    found = decisions(run)
    assert found["delete"][0][:2] == ("reject", "auto")
    assert found["add"] == [("modify", "doubling", "doubled x")]
    assert tool_text(states_by_sample(run)["add"]) == ["7"]  # 2 doubled, plus 3
    spec = json.loads((run / "spec.json").read_text())
    assert spec["targets"][0]["approval"] == [
        {"approver": "auto", "tools": "delete*", "args": {"decision": "reject"}},
        {"approver": "doubling", "tools": ["add"]},
    ]
    assert run_cli("verify", run).returncode == EXIT_PASSED


def test_eval_takes_an_approval_file_in_json(tmp_path: Path) -> None:
    task = copy_task(tmp_path)
    policies = {"approvers": [{"name": "auto", "tools": "*", "decision": "reject"}]}
    (tmp_path / "approval.json").write_text(json.dumps(policies))
    (result,) = run_eval(
        f"{task}@approval_task",
        task_args={"policy": "none"},
        approval=str(tmp_path / "approval.json"),
        log_dir=tmp_path / "runs",
    )
    assert result.status == "success", result.error
    assert result.path is not None
    assert {d[0] for found in decisions(result.path).values() for d in found} == {"reject"}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("approvers:\n  - name: nobody\n    tools: '*'\n", "no approver is registered as 'nobody'"),
        ("approvers:\n  - name: auto\n", "'auto' has no 'tools:'"),
        ("policies: []\n", "it has no 'approvers:' list"),
        ("approvers: [\n", "not YAML or JSON"),
        ("approvers:\n  - name: auto\n    tools: '*'\n    colour: red\n", "'auto': "),
    ],
)
@pytest.mark.doc(
    "docs/cli.md",
    "An approval file that is not one (no `approvers:` list, an approver no one registered, "
    "one without `tools:`) is exit 2, with one line naming the file and the approver.",
)
def test_a_bad_approval_file_is_exit_2(tmp_path: Path, text: str, said: str) -> None:
    task = copy_task(tmp_path)
    (tmp_path / "approval.yaml").write_text(text)
    proc = run_cli(
        *("run", f"{task}@approval_task", "-T", "policy=none"),
        *("--approval", tmp_path / "approval.yaml", "--log-dir", tmp_path / "runs"),
        cwd=REPO,
    )
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert said in line and "approval.yaml" in line


def test_a_task_takes_an_approval_file_as_inspect_does(tmp_path: Path) -> None:
    (tmp_path / "approval.yaml").write_text(
        "approvers:\n  - name: auto\n    tools: '*'\n    decision: reject\n"
    )
    task = Task(dataset=[Sample(input="x")], approval=str(tmp_path / "approval.yaml"))
    (policy,) = task.approval
    assert policy.tools == "*"
    assert policies_record(task.approval) == [
        {"approver": "auto", "tools": "*", "args": {"decision": "reject"}}
    ]
