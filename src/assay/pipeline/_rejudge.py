"""On resume: the trials an earlier try finished are judged again from their bundles.

Cheap, and identical by construction: the judge reads the same bundle and output bytes
a run judges, and grader calls are answered from the log. Score lines a crash lost after
their bundle was written are written now, each bound by its ``match`` event.
"""

from __future__ import annotations

from typing import Any

from assay._digest import loads
from assay.evidence import ARTIFACTS, BUNDLES, ArtifactStore
from assay.evidence._framed import open_evidence
from assay.model import epoch_scope, replay_scope
from assay.pipeline._judge import judge
from assay.pipeline._replay import replay_of_run
from assay.pipeline._run import _Run, record_scores
from assay.score import score_id


async def judge_finished(run: _Run) -> set[str]:
    """Count the finished trials again from their bundles; fill in missing scores."""
    point, path = run.point, run.writer.path
    if point is None or path is None:
        return set()
    store = ArtifactStore(path / ARTIFACTS, write=False)
    # Re-judging finished trials must not ask graders again: answer from the log.
    # A call a crash lost before it was logged is made live, and recorded in the
    # trial's events as its first one was meant to be (so ``assay score`` replays it).
    replay = replay_of_run(path, live_fallback=True)
    scored = point.scored
    with open_evidence(path / BUNDLES) as handle, replay_scope(replay):
        for line in handle:
            bundle = loads(line)
            trial = bundle["trial"]
            trial_id = trial["trial_id"]
            if trial_id not in point.finished:
                continue
            sha = bundle["observation"].get("output")
            output = store.get(sha) if sha else None
            if all(score_id(trial_id, scorer) in scored for scorer in run.scorers):
                await judge_again(run, bundle, output)  # its grader calls are all logged
                continue
            recorder = run.writer.recorder(trial_id)
            recorder.last = point.last_event[trial_id]
            with recorder.bound(), recorder.scoring_phase(), epoch_scope(trial["repetition"]):
                records = await judge_again(run, bundle, output)
            missing = [r for r in records if r["score_id"] not in scored]
            record_scores(run.writer, recorder, bundle["digest"], missing)
    return point.finished


async def judge_again(run: _Run, bundle: dict[str, Any], output: bytes | None) -> list[Any]:
    """Judge a finished trial's bundle, count it and add its row; its score records."""
    records = await judge(bundle, output, run.scorers, run.metrics, run.rows, run.task_metrics)
    trial = bundle["trial"]
    run.observe(trial["index"], trial["target_id"], bundle["state"], records)
    return records
