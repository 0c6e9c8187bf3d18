"""Grader calls are counted apart from the target's: each score record carries the usage
of the calls its scorer made, the report sums it per target and scorer, and ``assay
score`` (replaying the calls, never asking a model) reproduces every figure and the
report byte for byte. Through the real openai SDK against a server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Sample, Task, eval, includes
from assay.evidence import Usage, verify_run
from assay.pipeline import rescore_run
from assay.report import to_json
from tests.helpers import graded_reply, graded_task_file, log_events, read_jsonl
from tests.servers.openai_compat import OpenAICompatServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAICompatServer]:
    """One server for the answerer and the grader, found through ``OPENAI_BASE_URL``."""
    with OpenAICompatServer(reply=graded_reply) as running:
        monkeypatch.setenv("OPENAI_BASE_URL", running.url)
        yield running


def graded_run(tmp_path: Path, **options: Any) -> Path:
    task_file = graded_task_file(tmp_path)
    (result,) = eval(f"{task_file}@capitals", log_dir=tmp_path / "runs", **options)
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path


def usage_by_trial(run: Path, kind: str) -> dict[str, Usage]:
    """What the *kind* events of each trial add up to, summed here independently."""
    totals: dict[str, Usage] = {}
    for event in log_events(run):
        if event["type"] == kind:
            totals.setdefault(event["trial"], Usage()).add_sampling(event["data"])
    return totals


@pytest.mark.doc(
    "docs/evidence.md",
    "A trial that called a model also has `usage`: its `sampling` events summed",
    "A grader's calls are not in it: they are `score_sampling` events, logged after the bundle "
    "is sealed,",
)
def test_grader_usage_is_counted_apart_and_rescored_exactly(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    # one trial at a time with the cache on: fr-again's calls are answered by the cache
    run = graded_run(tmp_path, cache=True, max_samples=1)
    assert len(server.requests) == 4  # fr and it: one answer and one grade each
    graded = usage_by_trial(run, "score_sampling")
    scores = {s["sample_id"]: s for s in read_jsonl(run / "scores.jsonl")}
    assert {k: s["status"] for k, s in scores.items()} == {
        "fr": "passed",
        "it": "failed",
        "fr-again": "passed",
    }
    for score in scores.values():
        assert score["usage"] == graded[score["trial_id"]].record()
    assert scores["fr-again"]["usage"]["cached_calls"] == 1
    assert scores["fr"]["usage"]["cached_calls"] == 0
    assert scores["fr"]["usage"]["cost"] > 0  # priced at the grader's rates

    fields = {"input_tokens", "output_tokens", "total_tokens", "calls", "cached_calls"}
    for bundle in read_jsonl(run / "bundles.jsonl"):  # the target's own call only
        assert set(bundle["usage"]) == fields | {"cost", "cached_cost"}  # as documented
        assert bundle["usage"]["calls"] == 1
        own = usage_by_trial(run, "sampling")[bundle["trial"]["trial_id"]]
        assert bundle["usage"] == own.record()

    report = json.loads((run / "report.json").read_text())
    grading_total = Usage()
    for usage in graded.values():
        grading_total.add(usage)
    expected = {"openai/answerer": {"model_graded_qa": grading_total.record()}}
    assert report["grading_usage"] == expected
    assert report["grading_usage_total"] == grading_total.record()
    assert (report["usage_total"]["calls"], report["grading_usage_total"]["calls"]) == (3, 3)
    assert report["usage_total"]["cost"] != report["grading_usage_total"]["cost"]
    rows = {row["sample_id"]: row for row in report["trials"]}
    assert rows["fr-again"]["grading_usage"]["model_graded_qa"]["cached_calls"] == 1
    assert verify_run(run).ok

    rescored = rescore_run(run)
    assert len(server.requests) == 4  # replayed from the evidence, no model asked
    assert rescored.differing == []
    assert to_json(rescored.report) == (run / "report.json").read_bytes()


def test_rescore_counts_each_trials_own_grader_calls_across_epochs(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    # With epochs, one grader prompt is asked in several trials; each trial replays its own.
    run = graded_run(tmp_path, cache=True, max_samples=1, epochs=2)
    scores = read_jsonl(run / "scores.jsonl")
    assert sorted(s["usage"]["cached_calls"] for s in scores) == [0, 0, 0, 0, 1, 1]
    rescored = rescore_run(run)
    assert rescored.differing == []
    assert to_json(rescored.report) == (run / "report.json").read_bytes()


def test_a_changed_grader_figure_is_a_differing_score(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    """The comparison itself can fail: replayed calls that add up to other figures
    than the record's are reported (here the replayed event's tokens are edited in
    memory, as a replay bug would, so verification still passes)."""
    import assay.pipeline._rescore as rescore_module
    from assay.pipeline._replay import replay_of_run

    run = graded_run(tmp_path)

    def inflated(path: Path, **kwargs: Any) -> Any:
        replay = replay_of_run(path, **kwargs)
        for calls in replay.graded.values():
            for queued in calls.values():
                for data in queued:
                    data["usage"] = {**data["usage"], "output_tokens": 999}
        return replay

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rescore_module, "replay_of_run", inflated)
        rescored = rescore_run(run)
    assert len(rescored.differing) == 3


def test_scorers_that_call_no_model_add_no_usage(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="four", target="four")], scorer=includes(), name="plain")
    (result,) = eval(task, model="mock/echo", log_dir=tmp_path)
    assert result.path is not None and result.report is not None
    assert all("usage" not in s for s in read_jsonl(result.path / "scores.jsonl"))
    assert result.report.grading_usage == {} and result.report.grading_usage_total.empty
    assert "Grading usage" not in (result.path / "report.md").read_text()
