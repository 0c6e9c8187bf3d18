"""react() and basic_agent() through ``eval``, with the mock model scripted to call tools
(tests/agent/agent_task.py): submit ends the loop, the task's scorer judges answers
while attempts remain, on_continue, limits, the evidence of every submission, and
re-scoring an agent's run without running a tool."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.evidence import verify_run
from assay.pipeline import rescore_run
from tests.helpers import (
    events_of,
    read_jsonl,
    run_cli,
    run_task_copy,
    state_of,
    states_by_sample,
)

TASK_FILE = Path(__file__).with_name("agent_task.py")
DEFAULT_CONTINUE = (
    "Please carry on with the next step as you judge best. If you have finished the "
    "task, call the submit() tool with your final answer."
)


def run_agent(tmp_path: Path, **task_args: Any) -> tuple[Path, ModuleType]:
    """Run a fresh copy of the agent task with *task_args*; its run and its module."""
    return run_task_copy(TASK_FILE, "agent_task", tmp_path, **task_args)


states = states_by_sample


def statuses(run: Path) -> dict[str, str]:
    return {s["sample_id"]: s["status"] for s in read_jsonl(run / "scores.jsonl")}


def roles(state: dict[str, Any]) -> list[str]:
    return [m["role"] for m in state["messages"]]


def called(state: dict[str, Any]) -> list[str]:
    return [c["function"] for m in state["messages"] for c in m.get("tool_calls") or []]


def user_texts(state: dict[str, Any]) -> list[str]:
    return [m["content"] for m in state["messages"][2:] if m["role"] == "user"]


def submissions(run: Path) -> dict[str, list[dict[str, Any]]]:
    """The ``agent_submission`` events' data, by sample id."""
    sample_of = {e["trial"]: e["data"]["sample_id"] for e in events_of(run, "trial_started")}
    found: dict[str, list[dict[str, Any]]] = {}
    for event in events_of(run, "agent_submission"):
        found.setdefault(sample_of[event["trial"]], []).append(event["data"])
    return found


def test_submit_ends_the_loop_and_its_answer_is_the_output(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="submit")
    state = states(run)["submit"]
    # the system prompt first, then the work; the third scripted turn is never asked for
    assert roles(state) == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert state["messages"][0]["content"].startswith("Solve the task.\n\n")
    assert "call the submit() tool" in state["messages"][0]["content"]
    assert called(state) == ["add", "submit"]
    assert state["messages"][-1] == {"role": "tool", "content": "5", "tool_call_id": "main_1_0"}
    assert state["output"]["message"]["content"] == "5"
    assert module.CALLS == [("add", (2, 3))]
    assert len(module.SEEN) == 2
    assert [t["name"] for t in state["tools"]] == ["add", "lookup", "submit"]
    assert statuses(run) == {"submit": "passed"}
    assert submissions(run) == {
        "submit": [{"agent": "react", "attempt": 1, "call": "main_1_0", "judged": False}]
    }


def test_a_wrong_answer_is_judged_by_the_scorer_and_the_model_tries_again(
    tmp_path: Path,
) -> None:
    run, _ = run_agent(tmp_path, only="wrong_then_right,right_first,always_wrong", attempts=2)
    by_sample = states(run)

    corrected = by_sample["wrong_then_right"]
    assert called(corrected) == ["submit", "add", "submit"]
    assert user_texts(corrected) == ["Wrong answer, try again."]
    assert roles(corrected)[4] == "user"  # told right after the wrong submission
    assert corrected["output"]["message"]["content"] == "42"

    right = by_sample["right_first"]
    assert called(right) == ["submit"]  # judged correct: no second try
    assert user_texts(right) == []
    assert right["output"]["message"]["content"] == "7"

    wrong = by_sample["always_wrong"]
    assert called(wrong) == ["submit", "submit"]  # two attempts, the third turn never asked
    assert wrong["output"]["message"]["content"] == "3"

    assert statuses(run) == {
        "wrong_then_right": "passed",
        "right_first": "passed",
        "always_wrong": "failed",
    }
    judged = submissions(run)
    assert judged["wrong_then_right"] == [
        {
            "agent": "react",
            "attempt": 1,
            "call": "main_0_0",
            "judged": True,
            "value": 0.0,
            "correct": False,
        },
        {"agent": "react", "attempt": 2, "call": "main_2_0", "judged": False},
    ]
    assert [(s["attempt"], s.get("correct")) for s in judged["right_first"]] == [(1, True)]
    assert [(s["attempt"], s.get("correct")) for s in judged["always_wrong"]] == [
        (1, False),
        (2, None),
    ]


def test_the_other_calls_of_the_submitting_turn_still_run(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="submit_and_add")
    state = states(run)["submit_and_add"]
    assert called(state) == ["submit", "add"]
    assert module.CALLS == [("add", (1, 1))]
    assert state["output"]["message"]["content"] == "5"
    assert len(module.SEEN) == 1


def test_one_attempt_is_not_judged_during_the_trial(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="wrong_then_right", attempts=1)
    state = states(run)["wrong_then_right"]
    assert called(state) == ["submit"]
    assert user_texts(state) == []
    assert state["output"]["message"]["content"] == "41"
    assert statuses(run) == {"wrong_then_right": "failed"}


def test_the_incorrect_message_may_be_worked_out_from_the_scores(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="always_wrong", attempts=3, incorrect="callable")
    state = states(run)["always_wrong"]
    # exact() scores a wrong answer INCORRECT ("I"): the function saw the scorer's Score
    assert user_texts(state) == ["No: 'I' for that one."] * 2
    assert called(state) == ["submit"] * 3


def test_the_scorer_judges_a_copy_and_cannot_edit_the_conversation(tmp_path: Path) -> None:
    # the scorer appends a message, edits one, writes to the store and to the output
    run, _ = run_agent(tmp_path, only="wrong_then_right", attempts=2, meddle=True)
    state = states(run)["wrong_then_right"]
    assert "MEDDLED" not in str(state)
    assert "meddled" not in state["store"]
    assert called(state) == ["submit", "add", "submit"]  # it still judged: wrong, then go on
    assert state["messages"][2]["tool_calls"][0]["arguments"] == {"answer": "41"}
    assert statuses(run) == {"wrong_then_right": "passed"}


def test_an_answer_without_a_tool_call_gets_the_continue_message(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path / "default", only="talks_first")
    state = states(run)["talks_first"]
    assert roles(state)[2:5] == ["assistant", "user", "assistant"]
    assert state["messages"][2]["content"] == "I will look it up."
    assert user_texts(state) == [DEFAULT_CONTINUE]
    assert called(state) == ["lookup", "submit"]
    assert statuses(run) == {"talks_first": "passed"}

    run, _ = run_agent(tmp_path / "text", only="talks_first", on_continue="text")
    assert user_texts(states(run)["talks_first"]) == ["Keep going, and submit when you are done."]

    run, _ = run_agent(tmp_path / "async", only="talks_first", on_continue="callable_text")
    assert user_texts(states(run)["talks_first"]) == ["Nudge 3"]  # system, user, assistant

    run, _ = run_agent(tmp_path / "true", only="talks_first", on_continue="true")
    assert user_texts(states(run)["talks_first"]) == [DEFAULT_CONTINUE]


def test_on_continue_returning_false_ends_the_loop_on_the_plain_answer(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="talks_first", on_continue="stop")
    state = states(run)["talks_first"]
    assert roles(state) == ["system", "user", "assistant"]
    assert state["output"]["message"]["content"] == "I will look it up."
    assert module.CALLS == []
    assert submissions(run) == {}
    assert statuses(run) == {"talks_first": "failed"}


def test_a_tool_error_goes_back_to_the_model_and_the_agent_goes_on(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="tool_error")
    state = states(run)["tool_error"]
    tool_answers = [m["content"] for m in state["messages"] if m["role"] == "tool"]
    assert tool_answers == ["Error: no note named 'gamma'", "17", "17"]
    assert module.CALLS == [("lookup", "gamma"), ("lookup", "alpha")]
    assert statuses(run) == {"tool_error": "passed"}


def test_a_submit_call_that_does_not_fit_is_told_to_the_model_not_taken(
    tmp_path: Path,
) -> None:
    run, _ = run_agent(tmp_path, only="bad_submit", attempts=1)
    state = states(run)["bad_submit"]
    assert called(state) == ["submit", "submit", "submit"]
    told = [m["content"] for m in state["messages"] if m["role"] == "tool"]
    assert told[0].startswith("Error: invalid arguments to submit:")
    assert "answer" in told[0]
    assert told[1].startswith("Error: invalid arguments to submit: Expected `str`, got `int`")
    assert told[2] == "17"
    # only the call that fitted was an answer: one submission, on the last call
    assert [s["call"] for s in submissions(run)["bad_submit"]] == ["main_2_0"]
    assert state["output"]["message"]["content"] == "17"


def test_the_answer_is_the_last_submit_call_that_fitted(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="two_submits")
    state = states(run)["two_submits"]
    told = [m["content"] for m in state["messages"] if m["role"] == "tool"]
    assert told[0] == "17" and told[1].startswith("Error: invalid arguments to submit")
    assert [s["call"] for s in submissions(run)["two_submits"]] == ["main_0_0"]
    assert state["output"]["message"]["content"] == "17"


def test_the_tasks_message_limit_ends_the_loop_and_the_state_is_scored(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="forever", message_limit=8)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    assert bundle["observation"]["outcome"] == "answered"
    state = state_of(run, bundle)
    assert state["limit"] == "message"
    assert len(state["messages"]) == 8
    assert roles(state)[:4] == ["system", "user", "assistant", "tool"]
    assert len(module.CALLS) == 3  # no tool ran past the limit
    assert statuses(run) == {"forever": "failed"}  # scored on the state it reached


def test_the_agents_own_message_limit_ends_the_loop(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="forever", agent_message_limit=6)
    state = states(run)["forever"]
    assert state["limit"] == "message"
    assert len(state["messages"]) == 6
    assert len(module.CALLS) == 2


def test_the_agents_own_token_limit_ends_the_loop(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="forever", agent_token_limit=400)
    state = states(run)["forever"]
    assert state["limit"] == "token"
    calls = [e for e in events_of(run, "sampling") if "model" in e["data"]]
    used = [e["data"]["usage"]["input_tokens"] + e["data"]["usage"]["output_tokens"] for e in calls]
    assert sum(used[:-1]) <= 400 < sum(used)  # stopped by the call that went past it
    assert len(module.CALLS) == len(used) - 1  # and that call's tools never ran


def test_without_a_submit_tool_a_plain_answer_ends_the_loop(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="talks_first", with_submit=False)
    state = states(run)["talks_first"]
    assert roles(state) == ["system", "user", "assistant"]
    assert "submit()" not in state["messages"][0]["content"]  # no submit prompt
    assert [t["name"] for t in state["tools"]] == ["add", "lookup"]
    assert state["output"]["message"]["content"] == "I will look it up."


def test_a_prompt_with_every_part_left_out_adds_no_system_message(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="submit", no_prompt=True)
    assert roles(states(run)["submit"])[:2] == ["user", "assistant"]


def test_basic_agent_continues_after_a_plain_answer_and_submits(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="talks_first", agent="basic")
    state = states(run)["talks_first"]
    assert state["messages"][0]["role"] == "system"
    assert "call the submit() function" in state["messages"][0]["content"]
    assert user_texts(state) == ["Please carry on with the next step as you judge best."]
    assert called(state) == ["lookup", "submit"]
    assert state["output"]["message"]["content"] == "25"
    assert statuses(run) == {"talks_first": "passed"}
    assert submissions(run)["talks_first"][0]["agent"] == "basic_agent"


def test_basic_agent_judges_attempts_like_react(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="wrong_then_right", agent="basic", attempts=2)
    state = states(run)["wrong_then_right"]
    assert called(state) == ["submit", "add", "submit"]
    assert user_texts(state) == ["Wrong answer, try again."]
    assert statuses(run) == {"wrong_then_right": "passed"}


def test_basic_agent_stops_at_50_messages_when_no_limit_is_set(tmp_path: Path) -> None:
    run, _ = run_agent(tmp_path, only="forever", agent="basic")
    state = states(run)["forever"]
    assert state["limit"] == "message"
    assert len(state["messages"]) == 50


def test_more_attempts_without_a_scorer_stop_the_run_with_one_line(tmp_path: Path) -> None:
    shutil.copy(TASK_FILE, tmp_path / "agent_task.py")
    ran = run_cli(
        "run",
        f"{tmp_path / 'agent_task.py'}@agent_task",
        "-T",
        "only=wrong_then_right",
        "-T",
        "attempts=2",
        "-T",
        "with_scorer=false",
        "--log-dir",
        tmp_path / "runs",
    )
    # docs/cli.md: a Python task's unit that ended in error before it had a gate is exit 1
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr
    said = [line.strip() for line in ran.stderr.splitlines() if "no scorer" in line]
    assert said == [
        "react allows 2 attempts, but the task has no scorer to judge an answer — give the "
        "Task a scorer (e.g. scorer=includes()), or use attempts=1"
    ]
    assert (
        "agent_submission" not in (next((tmp_path / "runs").iterdir()) / "events.jsonl").read_text()
    )


def test_verify_passes_and_rescoring_runs_no_tool_and_no_judge(tmp_path: Path) -> None:
    run, module = run_agent(tmp_path, only="wrong_then_right,submit", attempts=2)
    assert verify_run(run).ok
    scores_before = (run / "scores.jsonl").read_bytes()
    ran, asked = len(module.CALLS), len(module.SEEN)
    rescored = rescore_run(run)
    assert rescored.differing == []
    assert len(module.CALLS) == ran and len(module.SEEN) == asked
    assert (run / "scores.jsonl").read_bytes() == scores_before
