"""``eval`` lets go of a task it built itself once the task's samples are frozen.

A run reads its samples from the frozen copy, so the ``Sample`` objects of a dataset
built in Python (a third of a 100,000-sample run's memory) are dead weight for the
length of the run. A ``Task`` the caller passes in stays the caller's, untouched.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, TaskState, eval, match, solver, task
from assay.dataset import MemoryDataset
from assay.solver import Generate
from tests.helpers import read_jsonl

DATASETS: list[weakref.ref[MemoryDataset]] = []


@solver
def datasets_alive() -> Any:
    """Answers how many of the datasets built by ``remembered`` are still alive."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        alive = sum(ref() is not None for ref in DATASETS)
        state.output.completion = f"alive {alive}"
        return state

    return solve


@task
def remembered(samples: int = 5) -> Task:
    """A task whose dataset (built here, held by no one else) is watched by a weakref."""
    dataset = MemoryDataset(
        [Sample(input=f"q {i}", target="alive 0", id=f"s{i}") for i in range(samples)]
    )
    DATASETS.append(weakref.ref(dataset))
    return Task(dataset=dataset, solver=[datasets_alive()], scorer=match(), name="remembered")


@pytest.fixture(autouse=True)
def _no_datasets_watched() -> None:
    DATASETS.clear()


@pytest.mark.parametrize("retries", [0, 1])
def test_a_task_the_eval_built_is_not_held_while_its_trials_run(
    tmp_path: Path, retries: int
) -> None:
    # task_retries may run the unit again, from the task: then the eval keeps it
    [result] = eval(remembered, model="mock/m", log_dir=tmp_path, task_retries=retries)

    assert result.status == "success", result.error
    assert result.path is not None
    answers = {row["answer"] for row in read_jsonl(result.path / "scores.jsonl")}
    assert answers == ({"alive 0"} if retries == 0 else {"alive 1"})


def test_a_task_the_caller_passes_in_is_left_whole(tmp_path: Path) -> None:
    given = remembered(samples=3)
    before = list(given.dataset)

    [result] = eval(given, model="mock/m", log_dir=tmp_path)

    assert result.status == "success", result.error  # its match fails: "alive 1"
    assert result.path is not None
    assert {row["answer"] for row in read_jsonl(result.path / "scores.jsonl")} == {"alive 1"}
    assert list(given.dataset) == before  # the caller's samples, as they were
