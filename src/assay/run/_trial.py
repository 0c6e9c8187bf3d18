"""One trial's life: attempts until a product result or the retry budget runs out.

Attempt states are ``succeeded`` (the target produced a product result, good or bad),
``errored`` (a Python solver raised), ``infra_failed`` (it could not be asked) and
``cancelled``. The first succeeded attempt is canonical and ends the trial
(``completed``); a trial whose every attempt failed on infrastructure is ``blocked``; one
that ended without either (cancelled) is ``invalid``. An errored attempt ends the trial
too (its state is what gets scored, with ``score_on_error``), unless the caller may
re-queue it (``retry_on_error``): then the trial comes back as ``requeued``, unsealed,
and a later call continues it with the next attempt number. A wrong answer is never
retried away.
"""

from __future__ import annotations

import random
from typing import Any, Literal

import anyio
import msgspec

from assay._digest import canonical_json
from assay._slots import retry_wait
from assay.dataset import Sample
from assay.evidence import TrialRecorder
from assay.plan import Trial
from assay.run._retry import backoff_delay
from assay.spec import RetryPolicy
from assay.target import InfrastructureError, Target, TargetOutcome

TrialState = Literal["completed", "blocked", "invalid", "requeued"]
AttemptState = Literal["succeeded", "errored", "infra_failed", "cancelled"]


class AttemptRecord(msgspec.Struct, frozen=True):
    """What one attempt came to; ``reason`` labels an infrastructure failure."""

    attempt: int
    status: AttemptState
    event: int
    reason: str | None = None
    retry_after: float | None = None


class TrialResult(msgspec.Struct):
    """A finished trial: its state, attempts, and the product result if there was one."""

    trial: Trial
    state: TrialState
    attempts: list[AttemptRecord]
    canonical: int | None
    outcome: TargetOutcome | None


async def run_trial(
    trial: Trial,
    sample: Sample,
    sample_record: dict[str, Any],
    target: Target,
    recorder: TrialRecorder,
    retry: RetryPolicy,
    rng: random.Random,
    *,
    earlier: list[AttemptRecord] | None = None,
    may_requeue: bool = False,
) -> TrialResult:
    """Run *trial* against *target*, recording every attempt as evidence.

    *earlier* are the attempts of a re-queued trial (its recorder is the same);
    with *may_requeue* an errored attempt returns the trial as ``requeued``.
    """
    attempts: list[AttemptRecord] = list(earlier or [])
    begun = 0  # the open attempt's ``attempt_started``, once recorded
    if not attempts:
        sample_json = canonical_json(sample_record)  # recorder.stored, inlined
        sample_sha = recorder.artifacts["sample"] = recorder.store.put_digest(sample_json)
        started = {
            "index": trial.index,
            "sample_id": trial.sample_id,
            "target_id": trial.target_id,
            "repetition": trial.repetition,
            "sample": sample_sha,
        }
        if recorder.last:
            started["resumed"] = True  # an earlier, unfinished try of this trial is logged
        attempt = {"attempt": 1, "target": target.id}  # and its first attempt's start
        recorder.root = recorder.own_two(
            "trial_started", started, "attempt_started", attempt, None, nested=True
        )
        begun = recorder.root + 1
    outcome: TargetOutcome | None = None
    state: TrialState = "invalid"
    first = len(attempts) + 1
    last = first + retry.max_attempts - 1
    root = recorder.root
    outer, recorder.parent = recorder.parent, root  # recorder.scope, inlined
    try:
        try:
            for number in range(first, last + 1):  # an attempt (no coroutine of its own)
                if not begun:
                    attempt = {"attempt": number, "target": target.id}
                    begun = recorder.own("attempt_started", attempt, root)
                recorder.parent = begun  # recorder.scope, inlined (per attempt)
                try:
                    outcome = await target.call(sample, trial.repetition)
                except InfrastructureError as exc:
                    outcome = None
                    record = _infra_failed(number, exc, begun, recorder)
                except anyio.get_cancelled_exc_class():
                    finished = {"attempt": number, "status": "cancelled"}
                    recorder.own("attempt_finished", finished, begun)
                    raise
                else:
                    # the attempt ends the trial unless it errored and may be re-queued
                    ends = not may_requeue or outcome.kind != "error"
                    record = _answered(number, outcome, begun, recorder, ends)
                finally:
                    recorder.parent = root
                    begun = 0
                attempts.append(record)
                if record.status == "succeeded":
                    state = "completed"
                    break
                if record.status == "errored":
                    state = "requeued" if may_requeue else "completed"
                    break
                if number < last:
                    await retry_wait(_delay(record, retry, number - first + 1, rng))
            else:
                state = "blocked"
        finally:
            canonical = attempts[-1].attempt if state == "completed" else None
            if state == "requeued":
                recorder.flush()  # its events so far reach the log while it waits
            elif not recorder.closed:  # (``_answered`` closed a trial its answer ended)
                summary = {
                    "state": state,
                    "canonical_attempt": canonical,
                    "attempts": len(attempts),
                }
                # later record_event calls (a stray thread) are dropped
                recorder.finish(summary, root)
    finally:
        recorder.parent = outer
    return TrialResult(trial, state, attempts, canonical, outcome)


def _delay(record: AttemptRecord, retry: RetryPolicy, failed: int, rng: random.Random) -> float:
    """Seconds before the next attempt: the server's ``Retry-After`` exactly, else the
    policy's backoff (the trial's slot goes to another trial meanwhile)."""
    if record.retry_after is not None:
        return record.retry_after
    return backoff_delay(retry, failed, rng)


def _infra_failed(
    number: int, exc: InfrastructureError, started: int, recorder: TrialRecorder
) -> AttemptRecord:
    """Record an attempt the target could not be asked in: its ``error`` and
    ``attempt_finished`` events."""
    detail = {"attempt": number, "kind": "infrastructure", "reason": exc.reason}
    error, finished = {**detail, "detail": exc.detail}, {**detail, "status": "infra_failed"}
    recorder.own_two("error", error, "attempt_finished", finished, started)
    return AttemptRecord(number, "infra_failed", started, exc.reason, exc.retry_after)


def _answered(
    number: int, outcome: TargetOutcome, started: int, recorder: TrialRecorder, ends: bool
) -> AttemptRecord:
    """Record an attempt that produced a result: its output artifact, its ``sampling``
    and ``attempt_finished`` events; and when it *ends* the trial, its ``trial_finished``
    at the same time (attempt *number* is then the trial's last, and its canonical one)."""
    status: AttemptState = "errored" if outcome.kind == "error" else "succeeded"
    artifacts = recorder.artifacts
    output = artifacts["output"] = recorder.store.put_digest(outcome.output)  # stored's
    data: dict[str, Any] = {
        "attempt": number,
        "prompt": artifacts["sample"],
        "output": output,
        "outcome": outcome.kind,
    }
    if outcome.failure is not None or outcome.exit_code is not None or outcome.stderr:
        _sampling_extras(data, outcome, recorder)
    if outcome.usage:
        data["usage"] = outcome.usage
    finished = {"attempt": number, "status": status, "outcome": outcome.kind}
    summary = (  # the summary run_trial's end would record: completed, by this attempt
        {"state": "completed", "canonical_attempt": number, "attempts": number} if ends else None
    )
    recorder.own_two("sampling", data, "attempt_finished", finished, started, summary=summary)
    return AttemptRecord(number, status, started)


def _sampling_extras(data: dict[str, Any], outcome: TargetOutcome, recorder: TrialRecorder) -> None:
    """What a program's answer adds to its ``sampling`` event: why it failed, its exit
    code, its stderr (an artifact), in that order."""
    if outcome.failure is not None:
        data["failure"] = outcome.failure
    if outcome.exit_code is not None:
        data["exit_code"] = outcome.exit_code
    if outcome.stderr:
        data["stderr"] = recorder.stored("stderr", outcome.stderr)
