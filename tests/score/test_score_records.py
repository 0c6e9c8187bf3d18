"""What a Python scorer says reaches ``scores.jsonl``: its metadata too, and every metric."""

from __future__ import annotations

import json
from pathlib import Path

import assay
from assay import Sample, Score, Task, scorer
from assay.score import accuracy, grouped, mean, stderr


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


@scorer(metrics=[accuracy()])
def noted():  # type: ignore[no-untyped-def]
    async def score(state, target):  # type: ignore[no-untyped-def]
        return Score(value=1, explanation="fine", metadata={"n": 3, "thing": Opaque()})

    return score


def test_a_scorers_metadata_is_kept_json_safe(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="q", target="a")], scorer=noted())
    [result] = assay.eval(task, model="mock/x", log_dir=tmp_path)
    assert result.path is not None
    [record] = [json.loads(x) for x in (result.path / "scores.jsonl").read_text().splitlines()]
    assert record["reason"] == "fine"
    assert record["metadata"] == {"n": 3, "thing": {"$repr": "<opaque>"}}


def test_metrics_with_the_same_name_are_all_reported(tmp_path: Path) -> None:
    samples = [
        Sample(input="q", target="Default output from the mock model", metadata={"k": "x"}),
        Sample(input="q", target="something else", metadata={"k": "y"}),
    ]
    metrics = [grouped(accuracy(), "k"), grouped(stderr(), "k"), mean(), mean()]
    task = Task(dataset=samples, scorer=assay.exact(), metrics=metrics)
    [result] = assay.eval(task, model="mock/x", log_dir=tmp_path)
    values = result.task_metrics["mock/x"]["exact"]
    assert set(values) == {"accuracy_by_k", "stderr_by_k", "mean", "mean_3"}
    assert values["accuracy_by_k"] == {"x": 1.0, "y": 0.0, "all": 0.5}
