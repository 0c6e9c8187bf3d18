"""Judging one sealed bundle: the step ``run`` and ``score`` share, so they cannot differ.

Both feed it the bundle and the output bytes from the artifact store; the scorers see the
decoded bytes, never the in-memory value a target returned, so a re-score from evidence
reproduces the run's scores exactly. Each scorer's model calls (a grader's) are counted
while it judges and kept on its score record: grading usage, apart from the trial's.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from assay.evidence import Usage, counting_calls, decode_output
from assay.evidence._bundle import is_json
from assay.model import Replay, current_replay
from assay.pipeline._task_metrics import TaskMetricsBuilder
from assay.report import TrialRows
from assay.score import (
    AnyScorer,
    MetricsBuilder,
    Observation,
    Score,
    Verdict,
    score_observation,
    score_record,
)
from assay.score._scorers import READS_RAW


def observation_of(
    bundle: dict[str, Any], output: bytes | None, *, decode: bool = True
) -> Observation:
    """The scorer's view of a bundle, with *output* the canonical output artifact's bytes;
    JSON ones also kept as they are (``raw``), and decoded only with *decode*."""
    seen = bundle["observation"]
    value = raw = None
    if output is not None and seen["outcome"] in ("answered", "error"):
        media = seen["media"]
        if is_json(media):
            raw = output
        if decode or raw is None:
            value = decode_output(output, media)
    return Observation(seen["expected"], seen["outcome"], value, seen.get("failure"), raw)


def reads_raw(scorers: dict[str, AnyScorer]) -> bool:
    """True when every scorer reads the output's JSON bytes itself (``READS_RAW``): the
    judge then leaves them undecoded (a Python scorer decoded them twice before)."""
    return all(getattr(scorer, READS_RAW, False) for scorer in scorers.values())


async def judge(
    bundle: dict[str, Any],
    output: bytes | None,
    scorers: dict[str, AnyScorer],
    metrics: MetricsBuilder,
    rows: TrialRows,
    task_metrics: TaskMetricsBuilder | None = None,
    raw: bool | None = None,
) -> list[dict[str, Any]]:
    """Score *bundle* with every scorer, count it in *metrics* and *rows* (its report
    row); its score records. *raw* is ``reads_raw(scorers)`` when the caller knows it
    (a run: once, not a trial)."""
    trial = bundle["trial"]
    raw = reads_raw(scorers) if raw is None else raw
    observation = observation_of(bundle, output, decode=not raw)
    replay = current_replay()
    if replay is not None:  # re-judging from evidence: this trial's grader calls
        replay.trial = trial["trial_id"]
    records = []
    grading: dict[str, Usage] = {}
    scores: dict[str, str] = {}
    reasons: dict[str, str] = {}
    target_id, sample_id = trial["target_id"], str(trial["sample_id"])
    details = task_metrics is not None and task_metrics.wants_details
    replayed = _sandboxes_replayed(replay, trial["trial_id"]) if replay is not None else None
    for scorer_id, scorer in scorers.items():
        with counting_calls() as used:
            if replayed is None:  # no scope to enter and leave for every trial
                verdict = await score_observation(scorer, observation)
            else:
                with replayed:
                    verdict = await score_observation(scorer, observation)
        if not used.empty:
            grading[scorer_id] = used
        records.append(score_record(trial, scorer_id, bundle["digest"], verdict, used))
        scores[scorer_id] = verdict.status
        if verdict.reason:
            reasons[scorer_id] = verdict.reason
        metrics.add_score(target_id, scorer_id, verdict.status, sample_id, verdict.value)
        if task_metrics is not None:
            task_metrics.add(
                trial,
                scorer_id,
                verdict.value,
                verdict.status,
                verdict.values,
                _details(verdict) if details else None,
            )
    metrics.add_trial(target_id, bundle["state"])
    rows.add_judged(bundle, scores, reasons, grading or None)
    return records


def _details(verdict: Verdict) -> Score:
    """What a ``@score_reducer`` sees of a verdict: the whole Score (its value is the
    builder's, so 0 here)."""
    return Score(
        value=0,
        answer=verdict.answer,
        explanation=verdict.reason or None,
        metadata=verdict.metadata,
    )


def _sandboxes_replayed(replay: Replay, trial_id: str) -> AbstractContextManager[object] | None:
    """While re-judging from evidence: the sandboxes the trial's scorers used, answering
    from what they recorded (``assay.sandbox._replayed``); ``None`` if they used none.
    Entered around each scorer (a ``Scope``: entered again as often as needed)."""
    recorded = replay.sandboxes.get(trial_id)
    if not recorded:
        return None
    from assay.sandbox import sandbox_scope
    from assay.sandbox._replayed import replayed_sandboxes

    return sandbox_scope(replayed_sandboxes(recorded, replay.read))
