"""A cluster worker's recorder (``DetachedRecorder``) keeps every event it is given as an
op for the driver, whichever way it is recorded: ``record`` (assay's own events) or
``record_if_open`` (a model's ``sampling``, ``record_event``). Its log is an empty one:
an event that reached it instead would be lost from the run."""

from __future__ import annotations

from pathlib import Path

from assay.evidence._detached import DetachedRecorder, replay_detached
from assay.evidence._log import EventLog
from assay.evidence._recorder import TrialRecorder
from assay.evidence._store import ArtifactStore
from tests.evidence.test_recorder_scoring import _Lines


def test_every_event_of_a_detached_recorder_is_kept_and_replayed(tmp_path: Path) -> None:
    detached = DetachedRecorder("t-1", last=2, parent=2)
    assert detached.record("exec", {"cmd": "true"}) == 3
    assert detached.record_if_open("sampling", {"model": "mock/m"}) == 4
    assert detached.record("extra", {"x": 1}, parent=3) == 5
    events = [op for op in detached.ops if op[0] == "event"]
    assert events == [
        ("event", 3, 2, "exec", {"cmd": "true"}),
        ("event", 4, 2, "sampling", {"model": "mock/m"}),
        ("event", 5, 3, "extra", {"x": 1}),
    ]
    sink = _Lines()
    driver = TrialRecorder(EventLog([sink]), ArtifactStore(tmp_path, write=False), "t-1")
    driver.last = driver.parent = 2
    replay_detached(detached.ops, driver)
    driver.close()
    assert driver.last == 5 and driver.usage.calls == 1  # the sampling counted once
    assert len(sink.lines) == 1 and b'"type":"extra"' in sink.lines[0]  # one batch line
