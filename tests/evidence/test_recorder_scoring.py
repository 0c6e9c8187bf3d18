"""A closed trial takes events from its scorers only: a thread its target left behind
(a timed-out sync callable) that wakes while the scorers run is dropped, not recorded as
one of the scorers' ``score_`` events."""

from __future__ import annotations

import contextvars
import json
import threading
from pathlib import Path

from assay.evidence._log import EventLog, events_in
from assay.evidence._recorder import TrialRecorder, record_event
from assay.evidence._store import ArtifactStore


class _Lines:
    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write_line(self, line: bytes) -> None:
        self.lines.append(line)

    def close(self) -> None:
        pass


def test_a_stray_target_thread_is_dropped_while_the_scorers_record(tmp_path: Path) -> None:
    sink = _Lines()
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(tmp_path / "artifacts"), "t-1")
    with recorder.bound():
        recorder.root = recorder.record("trial_started", {}, parent=None)
        stray = contextvars.copy_context()  # a target's thread, started during the trial
        recorder.record("trial_finished", {})
        recorder.close()
        with recorder.scoring_phase():
            late: list[int | None] = []
            thread = threading.Thread(target=lambda: late.append(stray.run(_late_event)))
            thread.start()
            thread.join()
            scorer = record_event("extra", {"by": "scorer"})
    assert late == [None]  # the stray thread's event is dropped
    assert scorer == 3  # the scorer's is the trial's third event
    kinds = [event["type"] for line in sink.lines for event in events_in(json.loads(line))]
    assert kinds == ["trial_started", "trial_finished", "score_extra"]
    assert b"target" not in b"".join(sink.lines)


def _late_event() -> int | None:
    return record_event("extra", {"by": "target"})
