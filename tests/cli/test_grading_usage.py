"""The CLI's usage line shows grading beside the target's usage, for ``assay run`` and
again, recomputed from the evidence alone, for ``assay score``: real subprocesses, the
real openai SDK, a server on 127.0.0.1 answering both the model and its grader."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from assay.evidence import Usage
from tests.helpers import (
    graded_reply,
    graded_task_file,
    log_events,
    read_jsonl,
    run_cli,
    run_dirs,
    start_cli,
    wait_for,
)
from tests.servers.openai_compat import OpenAICompatServer, ok, slow

USAGE = re.compile(
    r"usage: (\d+) calls \((\d+) cached\), (\d+) input \+ (\d+) output tokens, cost (\S+); "
    r"grading: (\d+) calls \((\d+) cached\), (\d+) input \+ (\d+) output tokens, cost (\S+)"
)


@pytest.mark.doc(
    "docs/cli.md",
    "Each unit's output ends with its calls, tokens and cost, and beside them grading's (the "
    "model calls scorers made, e.g. a `model_graded_qa` grader):",
    "`resume` and `score` (recomputed from the evidence, identical) print the same line.",
)
def test_run_and_score_print_grading_usage_beside_the_targets(tmp_path: Path) -> None:
    task_file = graded_task_file(tmp_path)
    with OpenAICompatServer(reply=graded_reply) as server:
        env = {"OPENAI_BASE_URL": server.url}
        ran = run_cli("run", f"{task_file}@capitals", "--log-dir", tmp_path / "runs", env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        asked = len(server.requests)
        (run,) = run_dirs(tmp_path / "runs")
        scored = run_cli("score", run, env=env)
        assert scored.returncode == 0, scored.stdout + scored.stderr
        assert len(server.requests) == asked == 6  # score asked no model
    found = USAGE.search(ran.stdout)
    assert found is not None, ran.stdout
    report = json.loads((run / "report.json").read_text())
    target, grading = report["usage_total"], report["grading_usage_total"]
    assert found.groups()[:4] == tuple(
        str(target[k]) for k in ("calls", "cached_calls", "input_tokens", "output_tokens")
    )
    assert found.groups()[5:9] == tuple(
        str(grading[k]) for k in ("calls", "cached_calls", "input_tokens", "output_tokens")
    )
    assert grading["input_tokens"] > target["input_tokens"]  # a grader reads the whole prompt
    rescored = USAGE.search(scored.stdout)
    assert rescored is not None and rescored.group(0) == found.group(0), scored.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "Re-judging answers a grader from its logged calls; a grader call the crash cut off is made "
    "again",
)
@pytest.mark.doc(
    "docs/cli.md",
    "`resume` and `score` (recomputed from the evidence, identical) print the same line.",
)
def test_a_resumed_graded_run_counts_every_grader_call_once(tmp_path: Path) -> None:
    """Interrupted after one graded trial: the resume re-judges it from the log (its
    grader call replayed, not asked again, and counted again exactly), runs the rest,
    and the report's grading usage is the sum of every ``score_sampling`` event."""
    task_file = graded_task_file(tmp_path)
    log_dir = tmp_path / "runs"
    with OpenAICompatServer(reply=graded_reply) as server:
        env = {"OPENAI_BASE_URL": server.url}
        server.push(ok(), ok(), slow(60))  # fr answered and graded; it's answer hangs
        proc = start_cli("run", f"{task_file}@capitals", "-j", "1", "--log-dir", log_dir, env=env)
        assert wait_for(lambda: len(server.requests) == 3, timeout=60)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        (run,) = run_dirs(log_dir)
        resumed = run_cli("resume", run, env=env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert len(server.requests) == 3 + 4  # it and fr-again: answer and grade each
        scored = run_cli("score", run, env=env)
        assert scored.returncode == 0, scored.stdout + scored.stderr
    graded = Usage()
    for event in log_events(run):
        if event["type"] == "score_sampling":
            graded.add_sampling(event["data"])
    assert graded.calls == 3
    report = json.loads((run / "report.json").read_text())
    assert report["grading_usage_total"] == graded.record()
    found, rescored = USAGE.search(resumed.stdout), USAGE.search(scored.stdout)
    assert found is not None and rescored is not None, resumed.stdout + scored.stdout
    assert found.group(0) == rescored.group(0)
    assert found.group(6) == "3"


def test_score_needs_no_server_or_key_for_a_grader_it_replays(tmp_path: Path) -> None:
    """``assay score`` never calls a model, so a grader named ``openai/...`` is made
    without the server's URL or a key in the environment (the run had them)."""
    task_file = graded_task_file(tmp_path)
    with OpenAICompatServer(reply=graded_reply) as server:
        env = {"OPENAI_BASE_URL": server.url}
        ran = run_cli("run", f"{task_file}@capitals", "--log-dir", tmp_path / "runs", env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    (run,) = run_dirs(tmp_path / "runs")
    scored = run_cli("score", run, env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""})
    assert scored.returncode == 0, scored.stdout + scored.stderr
    assert "all equal the recorded ones" in scored.stdout, scored.stdout


@pytest.mark.doc(
    "docs/evidence.md",
    "Re-judging answers a grader from its logged calls; a grader call the crash cut off is made "
    "again",
)
def test_a_grader_call_a_kill_cut_off_is_made_again_by_resume_and_recorded(
    tmp_path: Path,
) -> None:
    """Killed while a trial's grader call is in flight, after its bundle reached the
    disk: resume judges that trial again, its grader is asked live (nothing recorded the
    first call's answer), and that call is evidence like any other: logged, counted in
    the trial's grading usage, and replayed by ``assay score``, which asks no model."""
    task_file = graded_task_file(tmp_path)
    log_dir = tmp_path / "runs"
    with OpenAICompatServer(reply=graded_reply) as server:
        env = {"OPENAI_BASE_URL": server.url}
        server.push(ok(), ok(), ok(), slow(60))  # fr answered and graded; it's grading hangs
        proc = start_cli("run", f"{task_file}@capitals", "-j", "1", "--log-dir", log_dir, env=env)
        assert wait_for(lambda: len(server.requests) == 4, timeout=60)
        (run,) = run_dirs(log_dir)
        assert wait_for(lambda: len(read_jsonl(run / "bundles.jsonl")) == 2, timeout=30)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert [s["sample_id"] for s in read_jsonl(run / "scores.jsonl")] == ["fr"]
        resumed = run_cli("resume", run, env=env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert len(server.requests) == 4 + 1 + 2  # it graded again; fr-again answered, graded
        scored = run_cli("score", run, env=env)
        assert scored.returncode == 0, scored.stdout + scored.stderr
        assert len(server.requests) == 7  # score asked no model
    assert run_cli("verify", run).returncode == 0
    graded: dict[str, Usage] = {}
    for event in log_events(run):
        if event["type"] == "score_sampling":
            graded.setdefault(event["trial"], Usage()).add_sampling(event["data"])
    scores = read_jsonl(run / "scores.jsonl")
    assert sorted(s["sample_id"] for s in scores) == ["fr", "fr-again", "it"]
    for score in scores:
        assert score["usage"] == graded[score["trial_id"]].record(), score
    report = json.loads((run / "report.json").read_text())
    assert report["grading_usage_total"]["calls"] == 3
