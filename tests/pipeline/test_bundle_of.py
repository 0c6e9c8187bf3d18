"""``bundle_of``: a trial's events are the bundle's ``[[n, digest], ...]`` lists, made at
once for the common one (a trial's one batch) and one by one for several."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.evidence import ArtifactStore, TrialRecorder
from assay.evidence._log import EventLog
from assay.pipeline._bundle_of import bundle_of
from assay.plan import Trial
from assay.run._trial import AttemptRecord, TrialResult
from assay.target._base import TargetOutcome


def _bundle(events: list[tuple[int, str]], store: ArtifactStore) -> dict[str, Any]:
    trial = Trial(0, "t-0", 0, "s0", "x", 1)
    outcome = TargetOutcome("answered", b"{}", "application/json")
    result = TrialResult(trial, "completed", [AttemptRecord(1, "succeeded", 2)], 1, outcome)
    recorder = TrialRecorder(EventLog([]), store, trial.trial_id)
    recorder.events = events
    return bundle_of(result, recorder, "4")


def test_the_events_are_lists_of_number_and_digest_however_many(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "artifacts")
    for count in (0, 1, 3):
        events = [(n, f"d{n}") for n in range(1, count + 1)]
        made = _bundle(events, store)["events"]
        assert made == [[n, d] for n, d in events]
        assert all(type(event) is list for event in made)
        assert events == [(n, f"d{n}") for n in range(1, count + 1)]  # the recorder's kept
    store.close()
