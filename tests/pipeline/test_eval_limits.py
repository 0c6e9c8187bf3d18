"""Limits are not errors: a trial that hits its message, token or time limit is cut off,
keeps the state it reached (with ``state.limit`` recorded), is scored on it, and does not
count against ``fail_on_error``; the rest of the solver chain does not run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from assay import Sample, Task, TaskState, eval, includes
from assay.evidence import verify_run
from assay.model import user_message
from assay.solver import Generate
from tests.helpers import events_of, read_jsonl, state_of


async def _keep_asking(state: TaskState, generate: Generate) -> TaskState:
    for turn in range(10):
        state.messages.append(user_message(f"and again {turn}"))
        state = await generate(state)
    return state


async def _answer_then_sleep(state: TaskState, generate: Generate) -> TaskState:
    state = await generate(state)
    await anyio.sleep(10)
    return state


def limited_run(tmp_path: Path, solver: Any, **limits: Any) -> tuple[Any, Path, list[str]]:
    """Run one sample with *limits* and a chain whose last step notes that it ran."""
    later: list[str] = []

    async def after(state: TaskState, generate: Generate) -> TaskState:
        later.append(str(state.sample_id))
        return state

    task = Task(
        dataset=[Sample(input="what is two plus two", target="four", id="s0")],
        solver=[solver, after],
        scorer=includes(),
        name="limited",
        **limits,
    )
    (result,) = eval(
        task, model="mock/x", model_args={"outputs": lambda m: "four it is"}, log_dir=tmp_path
    )
    assert result.path is not None and verify_run(result.path).ok
    return result, result.path, later


@pytest.mark.parametrize(
    ("solver", "limits", "kind"),
    [
        (_keep_asking, {"message_limit": 4}, "message"),
        (_keep_asking, {"token_limit": 20}, "token"),
        (_answer_then_sleep, {"time_limit": 0.2}, "time"),
    ],
    ids=["message", "token", "time"],
)
def test_a_limit_cuts_the_trial_off_and_it_is_scored_not_errored(
    tmp_path: Path, solver: Any, limits: dict[str, Any], kind: str
) -> None:
    result, run, later = limited_run(tmp_path, solver, **limits)

    # Not an error: the default fail_on_error=True did not stop the unit.
    assert result.status == "success", result.error
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    assert bundle["state"] == "completed"
    assert [a["status"] for a in bundle["attempts"]] == ["succeeded"]
    assert bundle["observation"]["outcome"] == "answered"
    # Cut off, with the limit recorded in the state artifact ...
    state = state_of(run, bundle)
    assert state["limit"] == kind
    assert state["output"]["message"]["content"] == "four it is"
    # ... and scored on the state it reached.
    (score,) = read_jsonl(run / "scores.jsonl")
    assert score["status"] == "passed"
    # The chain stopped: the step after the one that hit the limit never ran.
    assert later == []


def test_the_token_limit_counts_every_call_of_the_trial(tmp_path: Path) -> None:
    _, run, _ = limited_run(tmp_path, _keep_asking, token_limit=20)
    usages = [e["data"]["usage"] for e in events_of(run, "sampling") if "model" in e["data"]]
    totals = [u["input_tokens"] + u["output_tokens"] for u in usages]
    assert sum(totals[:-1]) <= 20 < sum(totals)  # the last call is the one that went over


def test_a_time_limit_does_not_wait_for_the_solver(tmp_path: Path) -> None:
    woke: list[str] = []

    async def answer_then_sleep(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        await anyio.sleep(10)
        woke.append(str(state.sample_id))  # only if the run let the solver sleep it out
        return state

    result, _, _ = limited_run(tmp_path, answer_then_sleep, time_limit=0.2)
    assert result.status == "success", result.error
    assert woke == [], "the run waited for the solver past its time limit"


def test_without_limits_the_whole_chain_runs(tmp_path: Path) -> None:
    _, run, later = limited_run(tmp_path, _keep_asking)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    state = state_of(run, bundle)
    assert state["limit"] is None
    assert len(state["messages"]) == 21  # the prompt, then ten asks and ten answers
    assert later == ["s0"]


def test_the_cut_off_state_holds_at_most_message_limit_messages(tmp_path: Path) -> None:
    _, run, _ = limited_run(tmp_path, _keep_asking, message_limit=4)
    (bundle,) = read_jsonl(run / "bundles.jsonl")
    state = state_of(run, bundle)
    assert state["limit"] == "message"
    assert len(state["messages"]) <= 4
