"""A task whose tool calls go through approval policies, run by tests/approval through
``eval`` (as a file, so ``assay score`` can rebuild it from the run directory).

The model is the mock provider scripted by each sample's input (tests/scripted_tools.py);
*policy* picks the task's approval policies, written as an Inspect user writes them.
"""

from __future__ import annotations

from typing import Any

from assay import (
    Score,
    Target,
    Task,
    TaskState,
    accuracy,
    generate,
    includes,
    scorer,
    task,
    tool,
    use_tools,
)
from assay.approval import (
    Approval,
    ApprovalPolicy,
    Approver,
    approver,
    auto_approver,
    human_approver,
)
from assay.model import ChatMessage, GenerateConfig, MockAPI, ToolCall, modelapi
from assay.solver import call_tools
from tests.scripted_tools import recording_add, scripted_sample, scripted_turns

CALLS: list[tuple[str, Any]] = []
"""Every tool run, in order: the tests check what ran."""

SEEN: list[tuple[str, str, int]] = []
"""What the doubling approver was shown: the call, its view, the history's length."""


add = recording_add(CALLS)


@tool
def delete_files(path: str) -> str:
    """Delete the files under a path.

    Args:
        path: where.
    """
    CALLS.append(("delete_files", path))
    return "deleted"


@approver
def doubling() -> Approver:
    """Runs ``add`` with its first argument doubled."""

    async def approve(
        message: str, call: ToolCall, view: Any, history: list[ChatMessage]
    ) -> Approval:
        SEEN.append((call.function, view.call.content, len(history)))
        arguments = {**call.arguments, "x": call.arguments["x"] * 2}
        return Approval(
            decision="modify",
            modified=ToolCall(call.id, call.function, arguments),
            explanation="doubled x",
        )

    return approve


def policies(policy: str) -> list[ApprovalPolicy] | None:
    """The approval policies named *policy*."""
    if policy == "human":
        return [ApprovalPolicy(human_approver(), "*")]
    return {
        "none": None,
        "approve": [ApprovalPolicy(auto_approver(), "*")],
        "reject": [
            ApprovalPolicy(auto_approver("reject"), "delete*"),
            ApprovalPolicy(auto_approver(), "*"),
        ],
        "modify": [ApprovalPolicy(doubling(), ["add"])],
        "terminate": [
            ApprovalPolicy(auto_approver("terminate"), "delete_files"),
            ApprovalPolicy(auto_approver(), "*"),
        ],
        "escalate": [
            ApprovalPolicy(auto_approver("escalate"), "add"),
            ApprovalPolicy(auto_approver("reject"), "add(x=1*"),
            ApprovalPolicy(auto_approver(), "*"),
        ],
        "unmatched": [ApprovalPolicy(auto_approver(), "delete_files")],
    }[policy]


@modelapi("approval_script")
def scripted_provider(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=scripted_turns("mock/approval"))


sample = scripted_sample

SAMPLES = [
    sample("add", [[["add", {"x": 2, "y": 3}]]], "done"),
    sample("delete", [[["delete_files", {"path": "/"}], ["add", {"x": 1, "y": 1}]]], "done"),
    sample("add_one", [[["add", {"x": 1, "y": 5}]]], "done"),
]


@scorer(metrics=[accuracy()])
def checks_with_tools() -> Any:
    """A scorer that calls tools itself (``delete_files``, then ``add``), as a scorer
    that inspects the product with tools does; its explanation is what each call
    answered, and it passes when ``add`` ran."""

    async def score(state: TaskState, target: Target) -> Any:
        state.tools = [add, delete_files]
        calls = [
            ToolCall("score_0", "delete_files", {"path": "/scored"}),
            ToolCall("score_1", "add", {"x": 10, "y": 1}),
        ]
        await call_tools(state, calls)
        answers = [m.content for m in state.messages[-len(calls) :]]
        return Score(value=1.0 if answers[-1] == "11" else 0.0, explanation=" | ".join(answers))

    return score


@task
def approval_task(policy: str = "approve", scorer_tools: bool = False) -> Task:
    return Task(
        dataset=SAMPLES,
        solver=[use_tools(add, delete_files), generate()],
        scorer=checks_with_tools() if scorer_tools else includes(),
        model="approval_script/tools",
        approval=policies(policy),
    )
