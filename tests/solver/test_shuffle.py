"""``multiple_choice(shuffle=True)``: the order is a function of the sample and epoch
only, so it is the same on every run (in this process or another), differs between
epochs, is recorded in the evidence, and ``choice()`` still scores the original letters."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from assay import eval
from assay.evidence import verify_run
from tests.helpers import read_jsonl, run_cli, run_dirs, state_of, write_module

TASK_FILE = '''
import re
from typing import Any

from assay import Epochs, Sample, Task, choice, multiple_choice, task
from assay.model import GenerateConfig, MockAPI, modelapi

VALUES = ["right", "wrong one", "wrong two", "wrong three", "wrong four"]


def pick_right(messages: Any) -> str:
    """Answer the letter in front of the value "right"."""
    found = re.search(r"^([A-Z])\\) right$", messages[-1].content, re.MULTILINE)
    return f"ANSWER: {found.group(1)}" if found else "ANSWER: ?"


@modelapi("picker")
def picker(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=pick_right)


@modelapi("first")
def first(name: str, config: GenerateConfig, **args: Any) -> MockAPI:
    return MockAPI(name, config, outputs=lambda messages: "ANSWER: A")


def rotated(position: int) -> list[str]:
    """The choices with "right" at *position* (the target letter says where)."""
    others = [v for v in VALUES if v != "right"]
    return others[:position] + ["right"] + others[position:]


@task
def mc(shuffle: bool = True) -> Task:
    samples = [
        Sample(input=f"Question {i}?", choices=rotated(i % 5), target="ABCDE"[i % 5], id=f"m{i}")
        for i in range(4)
    ]
    return Task(
        dataset=samples,
        solver=multiple_choice(shuffle=shuffle),
        scorer=choice(),
        epochs=Epochs(3),
        model="picker/v1",
    )
'''

RIGHT_AT = {f"m{i}": i % 5 for i in range(4)}


@pytest.fixture(scope="module")
def task_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mc")
    return write_module(folder, "mc_tasks", TASK_FILE)


def orders(run: Path) -> dict[tuple[str, int], list[int]]:
    """``choice_order`` of every trial, by (sample id, epoch)."""
    found = {}
    for bundle in read_jsonl(run / "bundles.jsonl"):
        state = state_of(run, bundle)
        found[(state["sample_id"], state["epoch"])] = state["metadata"]["choice_order"]
    return found


def run_in_process(task_file: Path, log_dir: Path, **options: Any) -> Path:
    (result,) = eval(f"{task_file}@mc", log_dir=log_dir, **options)
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    return result.path


def test_the_shuffle_is_the_same_across_runs_and_processes(task_file: Path, tmp_path: Path) -> None:
    first = orders(run_in_process(task_file, tmp_path / "one"))
    second = orders(run_in_process(task_file, tmp_path / "two"))
    proc = run_cli("run", f"{task_file}@mc", "--log-dir", tmp_path / "cli")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (cli_run,) = run_dirs(tmp_path / "cli")
    other_process = orders(cli_run)

    assert len(first) == 12
    assert first == second == other_process
    for order in first.values():
        assert sorted(order) == [0, 1, 2, 3, 4]


def test_the_shuffle_differs_between_epochs_and_samples(task_file: Path, tmp_path: Path) -> None:
    found = orders(run_in_process(task_file, tmp_path))
    for sample in RIGHT_AT:
        epochs = [tuple(found[(sample, e)]) for e in (1, 2, 3)]
        assert len(set(epochs)) > 1, (sample, epochs)
    assert len({tuple(o) for o in found.values()}) > 4


def test_the_choice_scorer_scores_the_original_letters_after_shuffling(
    task_file: Path, tmp_path: Path
) -> None:
    run = run_in_process(task_file, tmp_path)
    scores = read_jsonl(run / "scores.jsonl")
    assert [s["status"] for s in scores] == ["passed"] * 12
    # the answer is reported in the dataset's letters, whatever the shown order was
    by_trial = {(s["sample_id"], s["repetition"]): s["answer"] for s in scores}
    for (sample, _), answer in by_trial.items():
        assert answer == "ABCDE"[RIGHT_AT[sample]]


def test_a_fixed_letter_is_right_exactly_when_the_shuffle_put_the_answer_there(
    task_file: Path, tmp_path: Path
) -> None:
    run = run_in_process(task_file, tmp_path, model="first/v1")
    found = orders(run)
    expected = {
        (sample, epoch): "passed" if order[0] == RIGHT_AT[sample] else "failed"
        for (sample, epoch), order in found.items()
    }
    scores = {
        (s["sample_id"], s["repetition"]): s["status"] for s in read_jsonl(run / "scores.jsonl")
    }
    assert scores == expected
    assert set(expected.values()) == {"passed", "failed"}  # the crafted case tells them apart


def test_without_shuffle_the_order_is_the_datasets(task_file: Path, tmp_path: Path) -> None:
    (result,) = eval(f"{task_file}@mc", log_dir=tmp_path, task_args={"shuffle": False})
    assert result.path is not None
    for bundle in read_jsonl(result.path / "bundles.jsonl"):
        state = state_of(result.path, bundle)
        assert "choice_order" not in state["metadata"]
        assert [c["original_position"] for c in state["choices"]] == [0, 1, 2, 3, 4]
    assert result.task_metrics["picker/v1"]["choice"]["accuracy"] == 1.0
    assert re.search("multiple_choice", (result.path / "spec.json").read_text())
