"""The fault knobs of a Python task: ``fail_on_error`` in each form, ``continue_on_fail``,
``retry_on_error`` (re-queued at the back, never for a wrong answer) and
``score_on_error``; each read back from the run directory the pipeline wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, TaskState, eval, match, solver
from assay.evidence import read_manifest, verify_run
from assay.solver import Generate, Solver
from tests.helpers import (
    bundles_by_sample,
    log_events,
    read_jsonl,
    run_dirs,
    trial_events,
)


@solver
def fails_on(sample_ids: list[str]) -> Solver:
    """Raise for the listed samples; answer through the model for the others."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id in sample_ids:
            raise RuntimeError(f"cannot do {state.sample_id}")
        return await generate(state)

    return solve


def ten_samples(erroring: list[str], **options: Any) -> Task:
    return Task(
        dataset=[Sample(input=f"q{i}", target="4", id=f"s{i}") for i in range(10)],
        solver=fails_on(erroring),
        scorer=match(),
        name="faulty",
        **options,
    )


def run_it(task: Task, tmp_path: Path, **options: Any) -> Any:
    """Run *task* one trial at a time (so "stopped early" is exact) and return the result
    and its run directory (found in the log dir: see the path bug below)."""
    (result,) = eval(
        task,
        model="mock/x",
        model_args={"outputs": lambda messages: "4"},
        log_dir=tmp_path,
        max_samples=1,
        **options,
    )
    (run,) = run_dirs(tmp_path)
    assert verify_run(run).ok, verify_run(run).problems
    return result, run


def bundle_count(run: Path) -> int:
    return len(read_jsonl(run / "bundles.jsonl"))


def test_fail_on_error_true_stops_at_the_first_error(tmp_path: Path) -> None:
    result, run = run_it(ten_samples(["s3"]), tmp_path, fail_on_error=True)
    assert result.status == "error"
    assert "fail_on_error=True" in (result.error or "")
    assert bundle_count(run) == 4 < 10  # s0..s3, then stopped
    assert read_manifest(run)["status"] == "interrupted"
    assert bundles_by_sample(run)["s3"]["observation"]["outcome"] == "error"


def test_fail_on_error_is_true_by_default(tmp_path: Path) -> None:
    result, run = run_it(ten_samples(["s0"]), tmp_path)
    assert result.status == "error"
    assert bundle_count(run) == 1


def test_fail_on_error_false_never_stops(tmp_path: Path) -> None:
    result, run = run_it(ten_samples(["s1", "s2", "s5", "s9"]), tmp_path, fail_on_error=False)
    assert result.status == "success", result.error
    assert bundle_count(run) == 10
    assert read_manifest(run)["status"] == "complete"
    outcomes = [b["observation"]["outcome"] for b in read_jsonl(run / "bundles.jsonl")]
    assert outcomes.count("error") == 4


@pytest.mark.parametrize(
    ("limit", "erroring", "status"),
    [
        (0.3, ["s1", "s2", "s3"], "success"),  # 3/10 is not over 0.3
        (0.3, ["s1", "s2", "s3", "s4"], "error"),  # 4/10 is
        (2, ["s1", "s2"], "success"),  # a count: 2 tolerated
        (2, ["s1", "s2", "s3"], "error"),  # the third is one too many
    ],
    ids=["fraction-3-ok", "fraction-4-fails", "count-2-ok", "count-3-fails"],
)
def test_fail_on_error_as_a_fraction_or_a_count(
    tmp_path: Path, limit: float, erroring: list[str], status: str
) -> None:
    result, run = run_it(ten_samples(erroring), tmp_path, fail_on_error=limit)
    assert result.status == status, result.error
    if status == "success":
        assert bundle_count(run) == 10
        assert result.task_metrics["mock/x"]["match"]["accuracy"] == pytest.approx(
            (10 - len(erroring)) / 10
        )
    else:
        last = int(erroring[-1][1:])
        assert bundle_count(run) == last + 1  # stopped right after the one too many
        assert f"fail_on_error={limit}" in (result.error or "")


def test_the_tasks_own_fail_on_error_applies_when_eval_does_not_set_one(tmp_path: Path) -> None:
    result, run = run_it(ten_samples(["s1", "s2"], fail_on_error=2), tmp_path)
    assert result.status == "success", result.error
    assert bundle_count(run) == 10


def test_continue_on_fail_finishes_every_trial_but_reports_error(tmp_path: Path) -> None:
    result, run = run_it(
        ten_samples(["s1", "s2"]), tmp_path, fail_on_error=True, continue_on_fail=True
    )
    assert bundle_count(run) == 10
    assert read_manifest(run)["status"] == "complete"
    assert result.status == "error"
    assert result.path == run


# -- retry_on_error ---------------------------------------------------------------------


@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
)
def test_retry_on_error_requeues_errored_trials_after_every_first_attempt(
    tmp_path: Path,
) -> None:
    calls: dict[tuple[str, int], int] = {}

    async def flaky(state: TaskState, generate: Generate) -> TaskState:
        key = (str(state.sample_id), state.epoch)
        calls[key] = calls.get(key, 0) + 1
        if calls[key] == 1:
            raise RuntimeError("first call fails")
        return await generate(state)

    task = Task(
        dataset=[Sample(input=f"q{i}", target="4", id=f"s{i}") for i in range(4)],
        solver=flaky,
        scorer=match(),
        epochs=2,
        name="flaky",
    )
    (result,) = eval(
        task,
        model="mock/x",
        model_args={"outputs": lambda m: "4"},
        log_dir=tmp_path,
        retry_on_error=2,
        max_samples=2,
    )
    assert result.status == "success", result.error
    assert result.path is not None and verify_run(result.path).ok
    assert result.task_metrics["mock/x"]["match"]["accuracy"] == 1.0
    bundles = read_jsonl(result.path / "bundles.jsonl")
    assert len(bundles) == 8
    for bundle in bundles:
        assert bundle["state"] == "completed"
        assert [a["status"] for a in bundle["attempts"]] == ["errored", "succeeded"]
        assert [a["attempt"] for a in bundle["attempts"]] == [1, 2]
        assert bundle["canonical_attempt"]["attempt"] == 2

    # Re-queued at the back: every trial's second attempt starts after all first ones.
    # (positions in the log: a requeued trial's batch is written when it is requeued)
    logged = list(enumerate(log_events(result.path)))
    starts = [(at, e) for at, e in logged if e["type"] == "attempt_started"]
    first = [at for at, e in starts if e["data"]["attempt"] == 1]
    second = [at for at, e in starts if e["data"]["attempt"] == 2]
    assert len(first) == len(second) == 8
    assert min(second) > max(first)
    # The errored attempt stays in the evidence, with its error.
    for events in trial_events(result.path).values():
        finished = [e["data"] for e in events if e["type"] == "attempt_finished"]
        if finished:
            assert [f["status"] for f in finished] == ["errored", "succeeded"]


@pytest.mark.doc(
    "docs/evidence.md",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
)
def test_retry_on_error_gives_up_after_its_retries(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="q", target="4", id="s0")],
        solver=fails_on(["s0"]),
        scorer=match(),
        name="hopeless",
    )
    (result,) = eval(task, model="mock/x", log_dir=tmp_path, retry_on_error=2, fail_on_error=False)
    assert result.path is not None and verify_run(result.path).ok
    (bundle,) = read_jsonl(result.path / "bundles.jsonl")
    assert [a["status"] for a in bundle["attempts"]] == ["errored"] * 3
    # completed all the same, on its last errored attempt
    assert bundle["state"] == "completed"
    assert bundle["canonical_attempt"]["attempt"] == 3
    assert bundle["observation"]["outcome"] == "error"
    (score,) = read_jsonl(result.path / "scores.jsonl")
    assert score["status"] == "unscorable"


def test_a_wrong_answer_is_never_retried(tmp_path: Path) -> None:
    calls: list[str] = []

    def wrong(messages: list[Any]) -> str:
        calls.append(messages[-1].content)
        return "5"

    task = Task(
        dataset=[Sample(input=f"q{i}", target="4", id=f"s{i}") for i in range(3)],
        scorer=match(),
        name="wrong",
    )
    (result,) = eval(
        task, model="mock/x", model_args={"outputs": wrong}, log_dir=tmp_path, retry_on_error=2
    )
    assert result.status == "success"
    assert result.path is not None and verify_run(result.path).ok
    assert len(calls) == 3
    for bundle in read_jsonl(result.path / "bundles.jsonl"):
        assert [a["status"] for a in bundle["attempts"]] == ["succeeded"]
    assert [s["status"] for s in read_jsonl(result.path / "scores.jsonl")] == ["failed"] * 3
    assert result.task_metrics["mock/x"]["match"]["accuracy"] == 0.0


# -- score_on_error ---------------------------------------------------------------------


async def _answers_then_raises(state: TaskState, generate: Generate) -> TaskState:
    state = await generate(state)
    raise RuntimeError("broke after answering")


def _error_after_answer_task() -> Task:
    return Task(
        dataset=[Sample(input="2 + 2", target="4", id="s0")],
        solver=_answers_then_raises,
        scorer=match(),
        name="late_error",
    )


def test_score_on_error_scores_an_errored_sample_on_its_last_state(tmp_path: Path) -> None:
    (result,) = eval(
        _error_after_answer_task(),
        model="mock/x",
        model_args={"outputs": lambda m: "4"},
        log_dir=tmp_path,
        score_on_error=True,
        fail_on_error=False,
        gate_minimum=0.5,
    )
    assert result.path is not None and verify_run(result.path).ok
    (bundle,) = read_jsonl(result.path / "bundles.jsonl")
    assert bundle["observation"]["outcome"] == "error"
    (score,) = read_jsonl(result.path / "scores.jsonl")
    assert (score["status"], score["value"], score["answer"]) == ("passed", 1.0, "4")
    assert result.gate is not None and result.gate.status == "passed"
    spec = json.loads((result.path / "spec.json").read_bytes())
    assert spec["errors"]["score_on_error"] is True


def test_without_score_on_error_an_errored_sample_is_unscorable_and_the_gate_inconclusive(
    tmp_path: Path,
) -> None:
    (result,) = eval(
        _error_after_answer_task(),
        model="mock/x",
        model_args={"outputs": lambda m: "4"},
        log_dir=tmp_path,
        fail_on_error=False,
        gate_minimum=0.5,
    )
    assert result.path is not None and verify_run(result.path).ok
    (score,) = read_jsonl(result.path / "scores.jsonl")
    assert score["status"] == "unscorable"
    assert "broke after answering" in score["reason"]
    assert result.gate is not None and result.gate.status == "inconclusive"
    assert any("unscorable" in reason for reason in result.gate.reasons)
