"""``setup`` steps run before the solver on every trial, and keep running when
``task_with`` replaces the solver; a task's spec is the same every time it is built."""

from __future__ import annotations

import json
from pathlib import Path

from assay import Sample, Task, TaskState, eval, generate, includes, solver, task_with
from assay.evidence import read_manifest, verify_run
from assay.solver import Generate, Solver
from tests.helpers import read_jsonl, state_of


@solver
def mark(label: str) -> Solver:
    """Note *label* in the trial's store (in the order steps ran)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.setdefault("ran", []).append(label)
        return state

    return solve


def marked_task() -> Task:
    return Task(
        dataset=[Sample(input=f"q{i}", target="Default", id=f"s{i}") for i in range(3)],
        setup=[mark("setup-a"), mark("setup-b")],
        solver=[mark("solver"), generate()],
        scorer=includes(),
        epochs=2,
        name="marked",
    )


def steps_run(run: Path) -> list[list[str]]:
    return [state_of(run, b)["store"]["ran"] for b in read_jsonl(run / "bundles.jsonl")]


def test_setup_runs_before_the_solver_on_every_trial(tmp_path: Path) -> None:
    (result,) = eval(marked_task(), model="mock/x", log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    assert steps_run(result.path) == [["setup-a", "setup-b", "solver"]] * 6
    assert result.task_metrics["mock/x"]["includes"]["accuracy"] == 1.0


def test_setup_still_runs_when_task_with_replaces_the_solver(tmp_path: Path) -> None:
    variant = task_with(marked_task(), solver=[mark("replacement"), generate()])
    (result,) = eval(variant, model="mock/x", log_dir=tmp_path)
    assert result.path is not None and verify_run(result.path).ok
    assert steps_run(result.path) == [["setup-a", "setup-b", "replacement"]] * 6


def test_task_with_can_replace_the_setup_and_other_fields(tmp_path: Path) -> None:
    variant = task_with(marked_task(), setup=mark("other-setup"), epochs=1, name="variant")
    (result,) = eval(variant, model="mock/x", log_dir=tmp_path)
    assert result.task == "variant"
    assert result.path is not None and verify_run(result.path).ok
    assert steps_run(result.path) == [["other-setup", "solver"]] * 3


def test_a_task_without_setup_runs_only_its_solver(tmp_path: Path) -> None:
    variant = task_with(marked_task(), setup=None, epochs=1)
    (result,) = eval(variant, model="mock/x", log_dir=tmp_path)
    assert result.path is not None
    assert steps_run(result.path) == [["solver"]] * 3


def _spec_digest(tmp_path: Path, task: Task) -> str:
    (result,) = eval(task, model="mock/x", log_dir=tmp_path)
    assert result.path is not None
    digest: str = read_manifest(result.path)["spec_digest"]
    return digest


def test_the_same_task_without_setup_freezes_to_the_same_spec(tmp_path: Path) -> None:
    first = task_with(marked_task(), setup=None)
    second = task_with(marked_task(), setup=None)
    assert _spec_digest(tmp_path / "a", first) == _spec_digest(tmp_path / "b", second)


def test_the_same_task_with_setup_freezes_to_the_same_spec(tmp_path: Path) -> None:
    first, second = marked_task(), marked_task()  # both alive: distinct objects
    assert _spec_digest(tmp_path / "a", first) == _spec_digest(tmp_path / "b", second)
    (run,) = list((tmp_path / "a").iterdir())
    spec = json.loads((run / "spec.json").read_bytes())
    assert "$repr" not in json.dumps(spec["targets"])
