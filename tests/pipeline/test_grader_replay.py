"""Model-graded scores are evidence: the grader's calls are logged, and re-scoring
replays them from the log instead of asking a model again."""

from __future__ import annotations

import sys
from pathlib import Path

from assay.evidence import verify_run
from assay.pipeline import eval as run_eval
from assay.pipeline import rescore_run
from tests.helpers import log_events, read_jsonl

TASK = """
from assay import Sample, Task, generate, model_graded_qa, task
from assay.model import GenerateConfig, MockAPI, modelapi

GRADER_CALLS = []


def grade(messages):
    GRADER_CALLS.append(messages[-1].content)
    return "GRADE: C" if "Paris" in messages[-1].content else "GRADE: I"


@modelapi("grader")
def grader_provider(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=grade)


def answer(messages):
    return "Paris" if "France" in messages[-1].content else "Lyon"


@modelapi("answerer")
def answerer_provider(name: str, config: GenerateConfig, **args):
    return MockAPI(name, config, outputs=answer)


@task
def capitals() -> Task:
    return Task(
        dataset=[
            Sample(input="Capital of France?", target="Paris", id="fr"),
            Sample(input="Capital of Italy?", target="Rome", id="it"),
        ],
        solver=generate(),
        scorer=model_graded_qa(model="grader/v1"),
        model="answerer/v1",
    )
"""


def test_grader_calls_are_logged_and_replayed(tmp_path: Path) -> None:
    task_file = tmp_path / "capitals.py"
    task_file.write_text(TASK)
    (result,) = run_eval(f"{task_file}@capitals", log_dir=tmp_path / "runs")
    assert result.status == "success", result.error
    run = result.path
    assert run is not None
    graded = [e for e in log_events(run) if e["type"] == "score_sampling"]
    assert sorted(e["data"]["model"] for e in graded) == ["grader/v1", "grader/v1"]
    assert verify_run(run).ok

    module = next(
        m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(task_file)
    )
    calls_before = len(module.GRADER_CALLS)
    rescored = rescore_run(run)
    assert rescored.differing == []
    assert len(module.GRADER_CALLS) == calls_before  # replayed, not asked again
    statuses = {s["sample_id"]: s["status"] for s in read_jsonl(run / "scores.jsonl")}
    assert statuses == {"fr": "passed", "it": "failed"}
