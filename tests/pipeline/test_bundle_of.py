"""``bundle_of``: a trial's events are the bundle's ``[[n, digest], ...]`` lists, made at
once for the common one (a trial's one batch) and one by one for several."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from assay.evidence import Usage
from assay.pipeline._bundle_of import bundle_of
from assay.plan import Trial
from assay.run._trial import AttemptRecord, TrialResult
from assay.target._base import TargetOutcome


def _bundle(events: list[tuple[int, str]]) -> dict[str, Any]:
    trial = Trial(0, "t-0", 0, "s0", "x", 1)
    outcome = TargetOutcome("answered", b"{}", "application/json")
    result = TrialResult(trial, "completed", [AttemptRecord(1, "succeeded", 2)], 1, outcome)
    recorder: Any = SimpleNamespace(events=events, artifacts={"output": "a"}, usage=Usage())
    return bundle_of(result, recorder, "4")


def test_the_events_are_lists_of_number_and_digest_however_many() -> None:
    for count in (0, 1, 3):
        events = [(n, f"d{n}") for n in range(1, count + 1)]
        made = _bundle(events)["events"]
        assert made == [[n, d] for n, d in events]
        assert all(type(event) is list for event in made)
        assert events == [(n, f"d{n}") for n in range(1, count + 1)]  # the recorder's kept
