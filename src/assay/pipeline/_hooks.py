"""What a run tells the hooks (``assay.hooks``): the payloads of its events, and the
``on_run_end`` that is sent once the run is sealed, however it ended."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec

from assay.errors import AssayError, Interrupted
from assay.hooks import HookSet, RunEnd, RunStart, SampleEnd, SampleStart
from assay.pipeline._conclude import RunOutcome, RunStopped
from assay.plan import Trial
from assay.spec import EvalSpec


def run_start(spec: EvalSpec, planned: int, path: Path | None, *, resumed: bool) -> RunStart:
    """The ``on_run_start`` payload."""
    where = None if path is None else str(path)
    return RunStart(spec.evaluation, spec.digest, planned, where, resumed)


def sample_start(evaluation: str, trial: Trial) -> SampleStart:
    """The ``on_sample_start`` payload of *trial*."""
    return SampleStart(
        evaluation=evaluation,
        trial_id=trial.trial_id,
        sample_id=str(trial.sample_id),
        target_id=trial.target_id,
        epoch=trial.repetition,
    )


def sample_end(
    evaluation: str, trial: Trial, bundle: dict[str, Any], records: list[dict[str, Any]]
) -> SampleEnd:
    """The ``on_sample_end`` payload: plain copies of what was just written."""
    scores = {r["scorer_id"]: {"status": r["status"], "value": r.get("value")} for r in records}
    return SampleEnd(
        evaluation=evaluation,
        trial_id=trial.trial_id,
        sample_id=str(trial.sample_id),
        target_id=trial.target_id,
        epoch=trial.repetition,
        state=str(bundle["state"]),
        scores=msgspec.json.decode(msgspec.json.encode(scores)),
    )


@asynccontextmanager
async def run_end_told(
    hooks: HookSet, evaluation: str, path: str | None
) -> AsyncIterator[Callable[[RunOutcome], RunOutcome]]:
    """Send ``on_run_end`` when the block ends, with how it ended: the block hands its
    outcome to the function it is given (``complete``), or raises (``stopped``,
    ``interrupted``, ``error``). Sent even when the run is being cancelled."""
    end: dict[str, Any] = {"status": "error"}

    def told(outcome: RunOutcome) -> RunOutcome:
        end.update(status="complete", gate=outcome.gate.status)
        return outcome

    try:
        yield told
    except RunStopped as exc:
        end.update(status="stopped", gate=exc.outcome.gate.status, error=exc.one_line())
        raise
    except Interrupted as exc:
        end.update(status="interrupted", error=exc.one_line())
        raise
    except AssayError as exc:
        end["error"] = exc.one_line()
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await hooks.emit("on_run_end", RunEnd(evaluation, path, **end))
