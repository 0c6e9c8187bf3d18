"""``assay.log``: runs read back as typed objects with Inspect's names, through the
verified evidence lookups (edited bytes are an error, never a result)."""

from __future__ import annotations

import inspect as pyinspect
from pathlib import Path

import pytest

from assay import Sample, Task, TaskState, eval, generate, includes
from assay.errors import EvidenceError
from assay.log import EvalLog, list_eval_logs, read_eval_log, read_eval_log_samples
from assay.solver import Generate
from tests.helpers import bundles_by_sample, edit_artifact, read_jsonl


async def fails_on_s2(state: TaskState, generate: Generate) -> TaskState:
    if state.sample_id == "s2":
        raise RuntimeError("no answer for s2")
    return await generate(state)


def run_of(tmp_path: Path, *, failing: bool = False, epochs: int = 1) -> Path:
    """A finished run of three samples on the mock model (s1 expects what it never says);
    with *failing*, s2's trial errors (and the run is complete: errors are tolerated)."""
    task = Task(
        dataset=[
            Sample(input="q 0", target="Default", id="s0", metadata={"level": 1}),
            Sample(input="q 1", target="elsewhere", id="s1"),
            Sample(input="q 2", target="Default", id="s2"),
        ],
        solver=[fails_on_s2] if failing else [generate()],
        scorer=includes(),
        name="capitals",
        epochs=epochs,
    )
    (result,) = eval(task, model="mock/one", log_dir=tmp_path, fail_on_error=False)
    assert result.path is not None
    return result.path


def test_read_eval_log_gives_the_header_results_and_every_sample(tmp_path: Path) -> None:
    run = run_of(tmp_path, epochs=2)

    log = read_eval_log(run)

    assert isinstance(log, EvalLog)
    assert log.status == "success"
    assert (log.eval.task, log.eval.model) == ("capitals", "mock/one")
    assert log.eval.spec_digest.startswith("sha256:")
    assert log.results is not None
    assert (log.results.total_samples, log.results.completed_samples) == (6, 6)
    (score,) = log.results.scores
    assert score.scorer == "includes"
    assert score.metrics["accuracy"].value == pytest.approx(4 / 6)
    assert log.samples is not None
    assert sorted((s.id, s.epoch) for s in log.samples) == [
        (sample, epoch) for sample in ("s0", "s1", "s2") for epoch in (1, 2)
    ]
    first = next(s for s in log.samples if s.id == "s0")
    assert first.input == "q 0" and first.target == "Default"
    assert first.metadata == {"level": 1}
    assert first.completion == "Default output from the mock model"
    assert first.output.completion == first.completion  # where Inspect code reads it
    assert first.scores["includes"].value == 1.0
    assert first.scores["includes"].as_float() == 1.0
    missed = next(s for s in log.samples if s.id == "s1")
    assert missed.scores["includes"].value == 0.0
    bundles = {b["trial"]["trial_id"]: b["digest"] for b in read_jsonl(run / "bundles.jsonl")}
    assert {s.trial_id: s.bundle_digest for s in log.samples} == bundles


def test_header_only_reads_no_samples_and_samples_stream_one_at_a_time(tmp_path: Path) -> None:
    run = run_of(tmp_path)

    header = read_eval_log(run, header_only=True)
    stream = read_eval_log_samples(run)

    assert header.samples is None
    assert header.results is not None and header.results.total_samples == 3
    assert pyinspect.isgenerator(stream)
    assert next(stream).id == "s0"  # the first is given before the others are read
    assert [s.id for s in stream] == ["s1", "s2"]


def test_a_run_with_an_errored_trial_has_status_error_and_the_error_on_its_sample(
    tmp_path: Path,
) -> None:
    run = run_of(tmp_path, failing=True)
    log = read_eval_log(run)
    assert log.status == "error"
    assert log.samples is not None
    errored = next(s for s in log.samples if s.id == "s2")
    assert "no answer for s2" in (errored.error or "")
    assert [s.error for s in log.samples if s.id != "s2"] == [None, None]


def test_list_eval_logs_lists_the_runs_of_a_folder_newest_first(tmp_path: Path) -> None:
    older = run_of(tmp_path)
    newer = run_of(tmp_path, failing=True)
    (tmp_path / "not-a-run").mkdir()

    infos = list_eval_logs(tmp_path)

    assert [Path(info.name) for info in infos] == [newer, older]
    assert [(info.task, info.model, info.status) for info in infos] == [
        ("capitals", "mock/one", "error"),
        ("capitals", "mock/one", "success"),
    ]


def test_edited_evidence_is_an_error_not_a_sample(tmp_path: Path) -> None:
    run = run_of(tmp_path)
    bundle = bundles_by_sample(run)["s1"]
    edit_artifact(run, bundle["observation"]["output"], lambda data: data.replace(b"D", b"E"))
    with pytest.raises(EvidenceError):
        list(read_eval_log_samples(run))


def test_an_edited_report_is_an_error_not_a_result(tmp_path: Path) -> None:
    run = run_of(tmp_path)
    report = run / "report.json"
    sealed = report.read_bytes()
    edited = sealed.replace(b'"planned": 3', b'"planned": 4')
    assert edited != sealed
    report.write_bytes(edited)
    with pytest.raises(EvidenceError, match=r"report\.json"):
        read_eval_log(run, header_only=True)


def test_a_folder_that_is_not_a_run_is_an_evidence_error(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError):
        read_eval_log(tmp_path)
