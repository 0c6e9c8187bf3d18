"""Score records: one per (trial, scorer), carrying the bundle digest it judged."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import Any

from assay.evidence import Usage
from assay.score._scorers import Observation, Scorer, Verdict

AnyScorer = Scorer | Callable[[Observation], Awaitable[Verdict]]


async def score_observation(scorer: AnyScorer, observation: Observation) -> Verdict:
    """Run *scorer* (sync or async); a crash becomes an ``error`` verdict naming it."""
    try:
        verdict = scorer(observation)
        if type(verdict) is CoroutineType or (  # the common case first: inspect's is slow
            not isinstance(verdict, Verdict) and inspect.isawaitable(verdict)
        ):
            verdict = await verdict
        return verdict
    except Exception as exc:
        return Verdict("error", None, f"scorer crashed: {type(exc).__name__}: {exc}")


def score_id(trial_id: str, scorer_id: str) -> str:
    """The id of the score *scorer_id* gave trial *trial_id*: unique in a run."""
    return f"{trial_id}/{scorer_id}"


def score_record(
    trial: dict[str, Any],
    scorer_id: str,
    bundle_digest: str,
    verdict: Verdict,
    usage: Usage | None = None,
) -> dict[str, Any]:
    """The record written to ``scores.jsonl`` (and compared by ``assay score``).

    A scorer's metadata (e.g. how a test program ended) is kept when it gave any, and
    the *usage* of the model calls it made (a grader's) when it made any: the line is
    bound by its ``match`` event, so ``verify`` catches an edited figure.
    """
    trial_id = trial["trial_id"]
    record: dict[str, Any] = {  # in sorted key order: the line's encoder sorts less
        "answer": verdict.answer,
        "bundle_digest": bundle_digest,
        "index": trial["index"],
        "reason": verdict.reason,
        "repetition": trial["repetition"],
        "sample_id": trial["sample_id"],
        "score_id": f"{trial_id}/{scorer_id}",  # score_id's, inlined (once a trial)
        "scorer_id": scorer_id,
        "status": verdict.status,
        "target_id": trial["target_id"],
        "trial_id": trial_id,
        "value": verdict.value,
    }
    if verdict.values is not None:  # a dict- or list-valued score: each value by key
        record["values"] = verdict.values
    if verdict.metadata is not None:
        record["metadata"] = verdict.metadata
    if usage is not None and not usage.empty:
        record["usage"] = usage.record()
    return record
