"""Judging one sealed bundle: the step ``run`` and ``score`` share, so they cannot differ.

Both feed it the bundle and the output bytes from the artifact store; the scorers see the
decoded bytes, never the in-memory value a target returned, so a re-score from evidence
reproduces the run's scores exactly. Each scorer's model calls (a grader's) are counted
while it judges and kept on its score record: grading usage, apart from the trial's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from assay.evidence import Usage, counting_calls, decode_output
from assay.evidence._bundle import JSON_MEDIA, is_json
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
    *,
    short: bool = True,
) -> list[dict[str, Any]]:
    """Score *bundle* with every scorer, count it in *metrics* and *rows* (its report
    row); its score records. *raw* is ``reads_raw(scorers)`` when the caller knows it
    (a run: once, not a trial); *short* ``False`` when the caller tried
    ``judged_by_answer`` already (``_lean``)."""
    if short and len(scorers) == 1:  # the common case, when it is one (replayed or
        # not: it calls no grader and uses no sandbox)
        quick = judged_by_answer(bundle, output, scorers, metrics, rows, task_metrics)
        if quick is not None:
            return quick
    trial = bundle["trial"]
    replay = current_replay()
    raw = reads_raw(scorers) if raw is None else raw
    observation = observation_of(bundle, output, decode=not raw)
    if replay is not None:  # re-judging from evidence: this trial's grader calls
        replay.trial = trial["trial_id"]
    records = []
    grading: dict[str, Usage] = {}
    scores: dict[str, str] = {}
    reasons: dict[str, str] = {}
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
        records.append(_counted(bundle, scorer_id, verdict, used, metrics, task_metrics))
        scores[scorer_id] = verdict.status
        if verdict.reason:
            reasons[scorer_id] = verdict.reason
    metrics.add_trial(trial["target_id"], bundle["state"])
    rows.add_judged(bundle, scores, reasons, grading or None)
    return records


AnswerJudging = Callable[[dict[str, Any], bytes | None, str | None], dict[str, Any] | None]
"""``judged_by_answer`` of a bundle, its output and the output's answer text when the
target handed it over (``TargetOutcome.answer``; ``None``: read from the bytes), with
the other arguments bound: the trial's one score record, or ``None``."""


def answer_judging(
    scorers: dict[str, AnyScorer],
    metrics: MetricsBuilder,
    rows: TrialRows,
    task_metrics: TaskMetricsBuilder | None,
) -> AnswerJudging | None:
    """``judged_by_answer`` with its scorer, counters and report rows looked up once (a
    run's lean path: once a run, not a trial), giving the one record itself (the lean
    path writes it with no list to go over); ``None`` when *scorers* are not one
    built-in scorer read from the answer text, whose trials it would all leave to
    ``judge``."""
    if len(scorers) != 1:
        return None
    ((scorer_id, scorer),) = scorers.items()
    of_answer = getattr(scorer, "verdict_of_answer", None)  # a Python scorer's adapter
    if of_answer is None or getattr(scorer, "answer_of", None) is None:
        return None
    add_pass, add_scored = metrics.add_pass, rows.add_scored
    add_task = None if task_metrics is None else task_metrics.add
    details = task_metrics is not None and task_metrics.wants_details

    def judged(
        bundle: dict[str, Any], output: bytes | None, answer: str | None = None
    ) -> dict[str, Any] | None:
        seen = bundle["observation"]
        if output is None or seen["outcome"] != "answered":
            return None
        media = seen["media"]
        if not media.endswith("+json") and media != JSON_MEDIA:  # is_json, inlined
            return None
        expected = seen["expected"]
        verdict = (
            of_answer(output, expected) if answer is None else of_answer(output, expected, answer)
        )
        if verdict is None:
            return None
        trial = bundle["trial"]
        target_id, status = trial["target_id"], verdict.status
        # a pass at 1.0 or a fail at 0.0 and the trial's state: what _counted and
        # add_trial count, in fewer steps
        add_pass(target_id, scorer_id, status == "passed", trial["sample_id"], bundle["state"])
        if add_task is not None:
            wanted = _details(verdict) if details else None
            add_task(trial, scorer_id, verdict.value, status, None, wanted)
        add_scored(bundle, scorer_id, status, verdict.reason)
        return score_record(trial, scorer_id, bundle["digest"], verdict)

    return judged


def judged_by_answer(
    bundle: dict[str, Any],
    output: bytes | None,
    scorers: dict[str, AnyScorer],
    metrics: MetricsBuilder,
    rows: TrialRows,
    task_metrics: TaskMetricsBuilder | None,
) -> list[dict[str, Any]] | None:
    """``judge``'s work for a trial answered in JSON and one built-in scorer reading only
    the answer text (``match``...): its verdict from the text, with no observation,
    state, scope, replay or usage counter made (it calls no model and uses no sandbox);
    ``None`` when the trial or scorer is not such, or the verdict cannot be made so
    (``judge`` then does it all)."""
    judged = answer_judging(scorers, metrics, rows, task_metrics)
    record = None if judged is None else judged(bundle, output, None)
    return None if record is None else [record]


def _counted(
    bundle: dict[str, Any],
    scorer_id: str,
    verdict: Verdict,
    used: Usage | None,
    metrics: MetricsBuilder,
    task_metrics: TaskMetricsBuilder | None,
) -> dict[str, Any]:
    """*verdict*'s score record, once counted in *metrics* and *task_metrics*."""
    trial = bundle["trial"]
    target_id = trial["target_id"]
    status, value = verdict.status, verdict.value
    metrics.add_score(target_id, scorer_id, status, str(trial["sample_id"]), value)
    if task_metrics is not None:
        details = _details(verdict) if task_metrics.wants_details else None
        task_metrics.add(trial, scorer_id, value, status, verdict.values, details)
    return score_record(trial, scorer_id, bundle["digest"], verdict, used)


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
