"""Assemble a finished trial's bundle from its result and what its recorder saw."""

from __future__ import annotations

from typing import Any

from msgspec.structs import asdict

from assay.evidence import BUNDLE_SCHEMA, TrialRecorder
from assay.run import AttemptRecord, TrialResult


def bundle_of(result: TrialResult, recorder: TrialRecorder, expected: Any) -> dict[str, Any]:
    """The unsealed bundle of *result*: trial, attempts, events, artifacts, observation."""
    trial, outcome, attempts = result.trial, result.outcome, result.attempts
    events = recorder.events  # [(n, digest), ...]: one, a trial's one batch, as a rule
    canonical = None
    if result.canonical is not None:
        event = attempts[result.canonical - 1].event
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
        "attempts": [_attempt(attempts[0])] if len(attempts) == 1 else [*map(_attempt, attempts)],
        "events": [list(events[0])] if len(events) == 1 else list(map(list, events)),
        "artifacts": dict(recorder.artifacts),
        "observation": observation,
    }
    usage = recorder.usage
    if usage.calls or usage.total_tokens:  # not ``usage.empty``: the trial's model calls
        bundle["usage"] = asdict(usage)  # ``usage.record()``, without its frame
    return bundle


def _attempt(attempt: AttemptRecord) -> dict[str, Any]:
    """An attempt's entry in its bundle (called, not a comprehension: a trial has one
    attempt, and a comprehension's frame cost more than the call)."""
    return {
        "attempt": attempt.attempt,
        "status": attempt.status,
        "event": attempt.event,
        "reason": attempt.reason,
    }
