"""Task metrics over a file-backed dataset: epochs reduced by plan position, grouped
metrics reading metadata back from the frozen dataset, and ``assay score`` agreeing."""

from __future__ import annotations

import json
from pathlib import Path

from assay.pipeline import eval as run_eval
from assay.pipeline import rescore_run

TASK = """
from assay import Epochs, Task, accuracy, generate, match, metric, stderr, task
from assay.score import grouped
from assay.dataset import json_dataset
from assay.model import GenerateConfig, MockAPI, modelapi

COUNTS = {"calls": 0}


def answer(messages):
    COUNTS["calls"] += 1
    number = int(messages[-1].content.split()[-1])
    # sample n answers right in epoch 1 when n % 3 == 0, in both epochs when n % 3 == 1
    if number % 3 == 1 or (number % 3 == 0 and COUNTS["calls"] % 2 == 1):
        return f"it is {number}"
    return "no idea"


@modelapi("counter")
def counter_provider(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=answer)


@metric
def kinds_seen():
    def compute(scores):
        return float(len({s.metadata["kind"] for s in scores}))
    return compute


@task
def numbers(path: str) -> Task:
    return Task(
        dataset=json_dataset(path),
        solver=generate(),
        scorer=match(),
        metrics=[accuracy(), stderr(), grouped(accuracy(), "kind"), kinds_seen()],
        epochs=Epochs(2, ["mean", "max"]),
        model="counter/v1",
    )
"""


def test_grouped_and_user_metrics_over_a_file_dataset_and_their_rescore(tmp_path: Path) -> None:
    data = tmp_path / "numbers.jsonl"
    records = [{"input": f"say {n}", "target": str(n), "kind": "ab"[n % 2]} for n in range(30)]
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    task_file = tmp_path / "numbers.py"
    task_file.write_text(TASK)
    (result,) = run_eval(
        f"{task_file}@numbers",
        log_dir=tmp_path / "runs",
        task_args={"path": str(data)},
        max_samples=1,  # epochs alternate calls: one trial at a time keeps that exact
    )
    assert result.status == "success", result.error
    metrics = result.task_metrics["counter/v1"]["match"]
    # per sample: n % 3 == 1 -> 1.0 both epochs; n % 3 == 0 -> 0.5 (mean) / 1.0 (max)
    means = [1.0 if n % 3 == 1 else 0.5 if n % 3 == 0 else 0.0 for n in range(30)]
    maxes = [1.0 if n % 3 != 2 else 0.0 for n in range(30)]
    assert metrics["accuracy"] == sum(means) / 30
    assert metrics["max/accuracy"] == sum(maxes) / 30
    by_kind = {k: [m for n, m in enumerate(means) if "ab"[n % 2] == k] for k in "ab"}
    assert metrics["accuracy_by_kind"] == {
        "a": sum(by_kind["a"]) / 15,
        "b": sum(by_kind["b"]) / 15,
        "all": sum(means) / 30,
    }
    assert metrics["kinds_seen"] == 2.0
    assert result.path is not None
    rescored = rescore_run(result.path)
    assert rescored.differing == []
    assert rescored.report.task_metrics == result.task_metrics


def test_assays_own_metrics_read_a_runs_values_at_once_with_the_same_result() -> None:
    """Over a run's every planned sample the plain metrics take the values in one go
    (``float_values``), not a ``SampleScore`` each: the same floats, the same figures."""
    from array import array

    from assay.pipeline._task_metrics import _Scores
    from assay.score import accuracy, std, stderr
    from assay.score._metric import SampleScore

    values = array("d", [0.0, 1.0, 0.5, 1.0, 0.25, 1.0, 0.0, 0.1, 0.7])
    fast = _Scores(values, bytearray(b"\x01" * 9), [f"s{i}" for i in range(9)], None)
    slow = [SampleScore(v, f"s{i}") for i, v in enumerate(values)]
    assert fast.float_values() == [s.value for s in slow] == [s.value for s in fast]
    for made in (accuracy(), std(), stderr()):
        assert made(fast) == made(slow) != 0.0
