"""Assemble a finished trial's bundle from its result and what its recorder saw."""

from __future__ import annotations

from typing import Any

from assay.evidence import BUNDLE_SCHEMA, TrialRecorder
from assay.run import TrialResult


def bundle_of(result: TrialResult, recorder: TrialRecorder, expected: Any) -> dict[str, Any]:
    """The unsealed bundle of *result*: trial, attempts, events, artifacts, observation."""
    trial = result.trial
    outcome = result.outcome
    canonical = None
    if result.canonical is not None:
        event = result.attempts[result.canonical - 1].event
        canonical = {"attempt": result.canonical, "event": event}
    observation: dict[str, Any] = (
        {"expected": expected, "outcome": None}
        if outcome is None
        else {
            "expected": expected,
            "outcome": outcome.kind,
            "output": recorder.artifacts.get("output"),
            "media": outcome.media,
            "failure": outcome.failure,
        }
    )
    bundle = {
        "schema": BUNDLE_SCHEMA,
        "trial": {
            "index": trial.index,
            "trial_id": trial.trial_id,
            "sample_id": trial.sample_id,
            "target_id": trial.target_id,
            "repetition": trial.repetition,
        },
        "state": result.state,
        "canonical_attempt": canonical,
        "attempts": [
            {"attempt": a.attempt, "status": a.status, "event": a.event, "reason": a.reason}
            for a in result.attempts
        ],
        "events": list(map(list, recorder.events)),  # [[n, digest], ...], no frame
        "artifacts": dict(recorder.artifacts),
        "observation": observation,
    }
    if not recorder.usage.empty:  # the trial's model calls: tokens, calls, cost
        bundle["usage"] = recorder.usage.record()
    return bundle
