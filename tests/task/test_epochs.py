"""Epochs through ``eval``: each sample's epoch scores are reduced to one value per reducer
before the task metrics, and every named reducer gives the number its rule predicts.

The crafted mock: sample ``s<c>`` is answered correctly in its first *c* epochs only, so
with 3 epochs the samples' epoch values are known in advance::

    s0: 0 0 0   s1: 1 0 0   s2: 1 1 0   s3: 1 1 1   s3b: 1 1 1
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay import Epochs, Sample, Task, TaskState, eval, match
from assay.evidence import verify_run
from assay.model import ChatMessage
from assay.solver import Generate
from tests.helpers import read_jsonl

CORRECT_EPOCHS = {"s0": 0, "s1": 1, "s2": 2, "s3": 3, "s3b": 3}


async def ask_with_epoch(state: TaskState, generate: Generate) -> TaskState:
    """Tell the mock which sample and epoch it is answering."""
    state.user_prompt.content = f"sample={state.sample_id} epoch={state.epoch}"
    return await generate(state)


def by_rule(messages: list[ChatMessage]) -> str:
    found = re.fullmatch(r"sample=(\w+) epoch=(\d+)", messages[-1].content)
    assert found is not None, messages[-1].content
    sample, epoch = found.group(1), int(found.group(2))
    return "42" if epoch <= CORRECT_EPOCHS[sample] else "41"


def crafted_task(epochs: Any) -> Task:
    return Task(
        dataset=[Sample(input="?", target="42", id=sid) for sid in CORRECT_EPOCHS],
        solver=ask_with_epoch,
        scorer=match(),
        epochs=epochs,
        name="crafted",
    )


def run_crafted(tmp_path: Path, task_epochs: Any, **options: Any) -> Any:
    (result,) = eval(
        crafted_task(task_epochs),
        model="mock/x",
        model_args={"outputs": by_rule},
        log_dir=tmp_path,
        **options,
    )
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    return result


# per-sample values under each reducer, then their mean (accuracy) over the 5 samples
EXPECTED = {
    "mean": (0 + 1 / 3 + 2 / 3 + 1 + 1) / 5,  # 0.6
    "median": (0 + 0 + 1 + 1 + 1) / 5,  # 0.6
    "mode": (0 + 0 + 1 + 1 + 1) / 5,  # 0.6
    "max": (0 + 1 + 1 + 1 + 1) / 5,  # 0.8
    "pass_at_2": (0 + 2 / 3 + 1 + 1 + 1) / 5,  # s1: 1 - C(2,2)/C(3,2) = 2/3
    "at_least_2": (0 + 0 + 1 + 1 + 1) / 5,  # 0.6
    "at_least_3": (0 + 0 + 0 + 1 + 1) / 5,  # 0.4
    "pass_at_1": (0 + 1 / 3 + 2 / 3 + 1 + 1) / 5,  # equals the mean
}


def label(reducer: str) -> str:
    return "accuracy" if reducer == "mean" else f"{reducer}/accuracy"


def test_every_reducer_gives_its_number_in_one_run(tmp_path: Path) -> None:
    reducers = list(EXPECTED)
    result = run_crafted(tmp_path, Epochs(3, reducers))
    values = result.task_metrics["mock/x"]["match"]
    for reducer, expected in EXPECTED.items():
        assert values[label(reducer)] == pytest.approx(expected), reducer
    # The trial-level pass rate is over all 15 planned trials, not reduced.
    bundles = read_jsonl(result.path / "bundles.jsonl")
    assert len(bundles) == 15
    scores = read_jsonl(result.path / "scores.jsonl")
    assert sum(s["status"] == "passed" for s in scores) == 0 + 1 + 2 + 3 + 3
    estimate = next(e for e in result.metrics.estimates if e.scorer_id == "match")
    assert (estimate.passed, estimate.denominator) == (9, 15)


@pytest.mark.parametrize("reducer", ["mean", "median", "max", "mode", "pass_at_2", "at_least_2"])
def test_each_reducer_alone(tmp_path: Path, reducer: str) -> None:
    result = run_crafted(tmp_path, Epochs(3, reducer))
    values = result.task_metrics["mock/x"]["match"]
    assert values[label(reducer)] == pytest.approx(EXPECTED[reducer])
    assert result.report is not None and result.report.task_metrics == result.task_metrics


def test_the_epochs_and_reducer_are_frozen_into_the_spec(tmp_path: Path) -> None:
    result = run_crafted(tmp_path, Epochs(3, ["max", "pass_at_2"]))
    spec = json.loads((result.path / "spec.json").read_bytes())
    assert spec["repetitions"] == 3
    assert spec["epochs_reducer"] == ["max", "pass_at_2"]


def test_eval_epochs_overrides_the_tasks_count_and_keeps_its_reducer(tmp_path: Path) -> None:
    result = run_crafted(tmp_path, Epochs(1, "max"), epochs=3)
    assert len(read_jsonl(result.path / "bundles.jsonl")) == 15
    assert result.task_metrics["mock/x"]["match"]["max/accuracy"] == pytest.approx(0.8)


def test_an_int_for_epochs_means_that_many_reduced_by_mean(tmp_path: Path) -> None:
    result = run_crafted(tmp_path, 3)
    assert result.task_metrics["mock/x"]["match"]["accuracy"] == pytest.approx(0.6)


def test_one_epoch_reduces_to_the_trial_scores(tmp_path: Path) -> None:
    result = run_crafted(tmp_path, Epochs(1, "mean"))
    # epoch 1 is correct for every sample with at least one correct epoch: 4 of 5
    assert result.task_metrics["mock/x"]["match"]["accuracy"] == pytest.approx(0.8)


def test_the_epochs_override_does_not_change_the_callers_task(tmp_path: Path) -> None:
    task = crafted_task(Epochs(1, "max"))
    eval(task, model="mock/x", model_args={"outputs": by_rule}, log_dir=tmp_path, epochs=3)
    assert task.epochs == Epochs(1, "max")
