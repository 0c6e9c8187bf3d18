"""handoff(): a react() agent hands the conversation to a named sub-agent, which works
with its own prompt and tools and answers the caller with what it submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Sample, Task, generate, tool, use_tools
from assay.agent import handoff, react
from assay.errors import ConfigError
from assay.evidence import verify_run
from assay.pipeline import eval as run_eval
from tests.agent.test_react import called, run_agent, states, statuses
from tests.helpers import bundles_by_sample, events_of, state_of


def test_the_sub_agent_works_on_the_conversation_and_its_answer_goes_back(
    tmp_path: Path,
) -> None:
    run, module = run_agent(tmp_path, only="handoff")
    state = states(run)["handoff"]
    # the caller: hands over, gets the sub-agent's answer as the tool's, then finishes
    assert called(state) == ["transfer_to_researcher", "add", "submit"]
    handed = next(m for m in state["messages"] if m["role"] == "tool")
    assert handed == {
        "role": "tool",
        "content": "alpha is 17, beta is 25",
        "tool_call_id": "main_0_0",
    }
    assert state["output"]["message"]["content"] == "42"
    assert statuses(run) == {"handoff": "passed"}
    # the caller's own conversation, tools and prompt were put back
    assert state["messages"][0]["content"].startswith("Solve the task.")
    assert [t["name"] for t in state["tools"]] == ["add", "transfer_to_researcher", "submit"]
    assert module.CALLS == [("lookup", "alpha"), ("lookup", "beta"), ("add", (17, 25))]

    (kept,) = state["store"]["handoffs"]
    assert kept["agent"] == "researcher"
    assert kept["answer"] == "alpha is 17, beta is 25"
    sub = kept["messages"]
    assert sub[0]["role"] == "system" and sub[0]["content"].startswith("ROLE:researcher")
    assert [m["role"] for m in sub[1:]] == ["user"] + ["assistant", "tool"] * 3
    assert called({"messages": sub}) == ["lookup", "lookup", "submit"]


def test_the_sub_agent_is_not_shown_the_callers_prompt_or_tool_traffic(tmp_path: Path) -> None:
    _, module = run_agent(tmp_path, only="handoff")
    researcher_calls = [
        seen for seen in module.SEEN if any("ROLE:researcher" in m["content"] for m in seen)
    ]
    assert len(researcher_calls) == 3
    first = researcher_calls[0]
    assert [m["role"] for m in first] == ["system", "user"]
    assert "Solve the task." not in first[0]["content"]
    assert not any(m.get("tool_calls") or m.get("tool_call_id") for m in first)


def test_the_sub_agents_calls_are_events_under_the_handoff_call(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="handoff")
    assert verify_run(run).ok
    calls = events_of(run, "tool_call")
    transfer = next(e for e in calls if e["data"]["function"] == "transfer_to_researcher")
    inside = [e for e in calls if e["parent"] == transfer["n"]]
    assert [e["data"]["function"] for e in inside] == ["lookup", "lookup", "submit"]
    models = [e for e in events_of(run, "sampling") if e["parent"] == transfer["n"]]
    assert len(models) == 3  # the sub-agent's model calls too
    agents = [e["data"]["agent"] for e in events_of(run, "agent_submission")]
    assert agents == ["researcher", "react"]


def test_a_limit_inside_the_sub_agent_leaves_the_callers_state_recorded(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="handoff_forever", message_limit=8)
    state = states(run)["handoff_forever"]
    assert state["limit"] == "message"
    # the caller's conversation, asked to hand over and never answered
    assert [m["role"] for m in state["messages"]] == ["system", "user", "assistant"]
    assert state["messages"][0]["content"].startswith("Solve the task.")
    assert called(state) == ["transfer_to_researcher"]
    (kept,) = state["store"]["handoffs"]  # what the sub-agent did before the limit
    assert len(kept["messages"]) == 8
    assert module.CALLS == [("lookup", "alpha")] * 3
    assert statuses(run) == {"handoff_forever": "failed"}


@tool
def noop() -> str:
    """Do nothing."""
    return ""


def test_a_handoff_called_outside_an_agent_is_an_error_the_model_is_told(
    tmp_path: Path,
) -> None:
    from assay.model import ModelOutput, ToolCall, assistant_message

    transfer = handoff(react(name="helper", tools=[noop]))

    def model(messages: list) -> ModelOutput:  # type: ignore[type-arg]
        if messages[-1].role == "tool":
            return ModelOutput.from_content("mock/x", "ok")
        call = ToolCall("c1", "transfer_to_helper", {})
        return ModelOutput("mock/x", assistant_message("", [call]), "tool_calls")

    task = Task(
        dataset=[Sample(input="go", target="ok")],
        solver=[use_tools(transfer), generate()],
        model="mock/x",
    )
    from assay.model import get_model

    (result,) = run_eval(task, model=get_model("mock/x", outputs=model), log_dir=tmp_path)
    assert result.status == "success", result.error
    (answer,) = [
        e for e in events_of(result.path, "tool_result") if e["data"]["function"] == transfer.name
    ]
    assert answer["data"]["error"] == "tool_error"
    (state,) = [state_of(result.path, b) for b in bundles_by_sample(result.path).values()]
    told = [m["content"] for m in state["messages"] if m["role"] == "tool"]
    assert told == ["Error: transfer_to_helper can only be used by an agent (react or basic_agent)"]


def test_handoff_needs_a_named_agent() -> None:
    with pytest.raises(ConfigError) as raised:
        handoff(react(tools=[noop]))
    assert raised.value.key == "agent.handoff_no_name"
    named = handoff(react(name="finder", description="Finds things."))
    assert named.name == "transfer_to_finder"
    assert named.definition.description == "Finds things."
    assert named.definition.parameters["properties"] == {}
