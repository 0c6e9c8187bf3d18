"""Isolation (invariant 9) through the real pipeline: every trial gets fresh solvers and a
fresh TaskState, so nothing leaks between samples or epochs, and one scorer cannot change
what another one judges."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay import (
    CORRECT,
    INCORRECT,
    Sample,
    Score,
    Target,
    Task,
    TaskState,
    eval,
    generate,
    includes,
    prompt_template,
    scorer,
    solver,
)
from assay.evidence import verify_run
from assay.model import system_message, user_message
from assay.solver import Choice, Generate, Solver
from tests.helpers import read_jsonl, state_of


def states(tmp_path: Path, task: Task, **options: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Run *task* one trial at a time; return the result and every trial's final state."""
    (result,) = eval(task, model="mock/x", log_dir=tmp_path, max_samples=1, **options)
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    run = result.path
    return result, [state_of(run, b) for b in read_jsonl(run / "bundles.jsonl")]


def samples(count: int = 3, **fields: Any) -> list[Sample]:
    return [Sample(input=f"q{i}", target="Default", id=f"s{i}", **fields) for i in range(count)]


@solver
def counting() -> Solver:
    """A stateful solver: its closure counts the calls it has seen."""
    seen = {"calls": 0}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen["calls"] += 1
        state.store["closure_calls"] = seen["calls"]
        return state

    return solve


class CountingSolver:
    """A class-based stateful solver with seed 003's ``copy()`` contract."""

    def __init__(self) -> None:
        self.calls = 0
        self.copies = 0

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        self.calls += 1
        state.store["object_calls"] = self.calls
        return state

    def copy(self) -> CountingSolver:
        self.copies += 1
        return CountingSolver()


class NoCopySolver:
    """A class-based stateful solver without ``copy()``: deep-copied per trial."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        self.calls += 1
        state.store["plain_calls"] = self.calls
        return state


def test_stateful_solvers_are_fresh_for_every_trial(tmp_path: Path) -> None:
    original = CountingSolver()
    plain = NoCopySolver()
    task = Task(
        dataset=samples(3),
        solver=[counting(), original, plain, generate()],
        scorer=includes(),
        epochs=2,
        name="stateful",
    )
    _, finals = states(tmp_path, task)
    assert len(finals) == 6
    for state in finals:
        assert state["store"] == {"closure_calls": 1, "object_calls": 1, "plain_calls": 1}
    # The task's own instances were copied, never run.
    assert (original.calls, original.copies) == (0, 6)
    assert plain.calls == 0


@solver
def counting_with(describe: Callable[[int], str]) -> Solver:
    """A stateful solver made with an argument that is not data (a function)."""
    seen = {"calls": 0}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen["calls"] += 1
        state.store["note"] = describe(seen["calls"])
        return state

    return solve


def test_a_stateful_solver_with_a_function_argument_is_fresh_for_every_trial(
    tmp_path: Path,
) -> None:
    task = Task(
        dataset=samples(3),
        solver=[counting_with(lambda n: f"call {n}"), generate()],
        scorer=includes(),
        name="live_args",
    )
    _, finals = states(tmp_path, task)
    assert [s["store"]["note"] for s in finals] == ["call 1"] * 3


async def _mutate_everything(state: TaskState, generate: Generate) -> TaskState:
    state.metadata["seen"].append(f"{state.sample_id}/{state.epoch}")
    state.metadata["top"] = state.epoch
    state.store.setdefault("visits", []).append(state.epoch)
    state.choices.append(Choice("added by a solver"))
    state.target.target.append("polluted")
    return state


def test_task_state_mutations_do_not_leak_between_samples_or_epochs(tmp_path: Path) -> None:
    prompts: list[str] = []

    def answer(messages: list[Any]) -> str:
        prompts.append(messages[-1].content)
        return "Default"

    task = Task(
        dataset=samples(2, metadata={"seen": []}, choices=["a", "b"]),
        solver=[_mutate_everything, prompt_template("Q: {prompt}"), generate()],
        scorer=includes(),
        epochs=3,
        name="mutating",
    )
    result, finals = states(tmp_path, task, model_args={"outputs": answer})
    for state in finals:
        key = f"{state['sample_id']}/{state['epoch']}"
        assert state["metadata"] == {"seen": [key], "top": state["epoch"]}
        assert state["store"] == {"visits": [state["epoch"]]}
        assert [c["value"] for c in state["choices"]] == ["a", "b", "added by a solver"]
        assert state["input"] == f"q{str(state['sample_id'])[1:]}"
    # prompt_template rewrote each trial's own prompt, never the sample's
    assert prompts == ["Q: q0"] * 3 + ["Q: q1"] * 3
    # the scorer judged against the sample's target, not the solver's edit of it
    assert result.task_metrics["mock/x"]["includes"]["accuracy"] == 1.0
    for bundle in read_jsonl(result.path / "bundles.jsonl"):
        assert bundle["observation"]["expected"] == "Default"


@scorer(metrics=[])
def vandal() -> Any:
    """A scorer that defaces the output, messages and target it is given; says correct."""

    async def score(state: TaskState, target: Target) -> Score:
        state.output.message.content = "defaced"
        state.messages.clear()
        state.choices.clear()
        target.target[:] = ["defaced"]
        return Score(value=CORRECT)

    return score


@scorer(metrics=[])
def careful() -> Any:
    """Correct when the output, messages and target are as the solver left them."""

    async def score(state: TaskState, target: Target) -> Score:
        intact = (
            state.output.completion == "Default"
            and len(state.messages) == 2
            and len(state.choices) == 2
            and target.text == "Default"
        )
        return Score(value=CORRECT if intact else INCORRECT, answer=state.output.completion)

    return score


def test_a_scorer_mutating_its_state_does_not_change_another_scorers_verdict(
    tmp_path: Path,
) -> None:
    task = Task(
        dataset=samples(3, choices=["a", "b"]),
        scorer=[vandal(), careful(), careful()],
        name="scorers",
    )
    result, _ = states(tmp_path, task, model_args={"outputs": lambda m: "Default"})
    records = read_jsonl(result.path / "scores.jsonl")
    assert len(records) == 9
    assert {(r["scorer_id"], r["status"]) for r in records} == {
        ("vandal", "passed"),
        ("careful", "passed"),
        ("careful_2", "passed"),
    }
    assert all(r["answer"] == "Default" for r in records if r["scorer_id"] != "vandal")


@scorer(metrics=[])
def store_vandal() -> Any:
    """A scorer that writes into the state's store and nested metadata; says correct."""

    async def score(state: TaskState, target: Target) -> Score:
        state.store["verdict"] = "forged"
        state.metadata["tags"].append("forged")
        return Score(value=CORRECT)

    return score


@scorer(metrics=[])
def store_reader() -> Any:
    """Correct when the store and metadata are as the solver left them."""

    async def score(state: TaskState, target: Target) -> Score:
        intact = state.store == {"verdict": "honest"} and state.metadata["tags"] == ["x"]
        return Score(value=CORRECT if intact else INCORRECT)

    return score


async def _write_store(state: TaskState, generate: Generate) -> TaskState:
    state.store["verdict"] = "honest"
    return state


def test_a_scorer_writing_the_store_does_not_change_another_scorers_verdict(
    tmp_path: Path,
) -> None:
    task = Task(
        dataset=samples(2, metadata={"tags": ["x"]}),
        solver=[_write_store, generate()],
        scorer=[store_vandal(), store_reader()],
        name="store_scorers",
    )
    result, _ = states(tmp_path, task)
    records = read_jsonl(result.path / "scores.jsonl")
    assert {(r["scorer_id"], r["status"]) for r in records} == {
        ("store_vandal", "passed"),
        ("store_reader", "passed"),
    }


def test_a_sample_with_chat_messages_as_input_runs(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def answer(messages: list[Any]) -> str:
        seen.append([m.role for m in messages])
        return "Default"

    task = Task(
        dataset=[Sample(input=[system_message("be brief"), user_message("q")], target="Default")],
        scorer=includes(),
        name="chat",
    )
    _, finals = states(tmp_path, task, model_args={"outputs": answer}, fail_on_error=False)
    assert seen == [["system", "user"]]
    assert finals[0]["output"]["message"]["content"] == "Default"


def test_a_list_input_that_is_not_chat_messages_is_the_samples_error(tmp_path: Path) -> None:
    asked: list[object] = []
    task = Task(
        dataset=[Sample(input=[[]], target="x", id="odd"), Sample(input="fine", target="x")],
        scorer=includes(),
        name="odd_input",
    )
    result, _ = states(
        tmp_path,
        task,
        model_args={"outputs": lambda m: asked.append(m) or "x"},
        fail_on_error=False,
    )
    bundles = {b["trial"]["sample_id"]: b for b in read_jsonl(result.path / "bundles.jsonl")}
    failure = bundles["odd"]["observation"]["failure"]
    assert failure.startswith("the sample's input is a list but not chat messages")
    assert len(asked) == 1  # only the good sample reached the model; the run went on
