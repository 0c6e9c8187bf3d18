"""A trial's events up to its bundle are logged as batch lines (type ``events``): the
same information, checked as strictly as lines of their own; and a run written one
event a line (before batches) still verifies and reads the same."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from assay.errors import EXIT_PASSED
from assay.evidence import TrialRecorder, checked_events, verify_run
from assay.evidence import _recorder as recorder_module
from assay.evidence._log import BATCH, EventLog, events_in
from assay.evidence._recorder import record_event
from assay.evidence._store import ArtifactStore
from tests.evidence.test_power_cut import SAMPLES, STOPPING
from tests.evidence.test_recorder_scoring import _Lines
from tests.evidence.test_tamper import edit_lines
from tests.helpers import (
    SHIPPING,
    log_events,
    read_jsonl,
    run_cli,
    run_spec_at,
    unique_callable_spec,
)


@pytest.fixture(scope="module")
def old_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipping example written one event a line, as assay wrote runs before batches."""
    folder = tmp_path_factory.mktemp("one-event-a-line")
    shutil.copytree(SHIPPING, folder / "spec")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TrialRecorder, "batch_limit", 0)
        run_spec_at(folder / "spec" / "eval.yaml", folder / "run")
    return folder / "run"


def _lines(run: Path) -> list[dict[str, Any]]:
    return read_jsonl(run / "events.jsonl")


@pytest.mark.doc(
    "docs/evidence.md",
    "A trial's events up to its bundle are written in batches: one line of type `events`",
    "- A batch line's `n` is its last event's and its `parent` is null.",
    "listed once, by its last event's `n` and its line's hash, which binds every event in it.",
    "Events logged after the bundle (`match`, `score_*`) and run-level events are lines of their",
)
def test_a_trivial_trial_is_one_batch_line_its_bundle_lists(shipping_run: Path) -> None:
    raw = (shipping_run / "events.jsonl").read_bytes().splitlines()
    for bundle in read_jsonl(shipping_run / "bundles.jsonl"):
        trial = bundle["trial"]["trial_id"]
        mine = [(line, json.loads(line)) for line in raw if json.loads(line)["trial"] == trial]
        batches = [(line, record) for line, record in mine if record["type"] == BATCH]
        assert len(batches) == 1, trial
        line, record = batches[0]
        inside = record["data"]["events"]
        assert [e["n"] for e in inside] == list(range(1, len(inside) + 1))
        assert (inside[0]["type"], inside[-1]["type"]) == ("trial_started", "trial_finished")
        assert record["n"] == inside[-1]["n"] and record["parent"] is None
        assert bundle["events"] == [[record["n"], hashlib.sha256(line).hexdigest()]]
        later = [record["type"] for _, record in mine if record["type"] != BATCH]
        assert later and all(kind == "match" or kind.startswith("score_") for kind in later)
    run_level = [r for r in read_jsonl(shipping_run / "events.jsonl") if r["trial"] is None]
    assert run_level and all(r["type"] != BATCH for r in run_level)
    assert verify_run(shipping_run).ok


@pytest.mark.doc(
    "docs/evidence.md",
    "A batch is written",
    "when it holds 64 events, once its first event is 2 s old (checked as an event is added",
)
def test_a_batch_is_written_at_64_events_after_2_s_and_at_trial_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1_000_000_000_000_000]  # ns; moved by the test, not by waiting

    class Clock:
        @staticmethod
        def time_ns() -> int:
            return now[0]

    # the clock itself, not the recorder's name for its module: a compiled recorder
    # (pyproject's mypyc hook) reads ``time`` from the module it imported, not its globals
    monkeypatch.setattr(recorder_module.time, "time_ns", Clock.time_ns)
    sink = _Lines()
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(tmp_path / "artifacts"), "t-1")
    recorder.root = recorder.record("trial_started", {}, parent=None)
    for i in range(129):
        recorder.record("extra", {"i": i})
    assert len(sink.lines) == 2  # events 1-64 and 65-128; 129 and 130 held
    recorder.record("extra", {"i": "late"})
    now[0] += 2_000_000_000  # the held batch's first event is 2 s old when the next comes
    recorder.record("extra", {"i": "later"})
    assert len(sink.lines) == 3
    recorder.record("trial_finished", {})
    records = [json.loads(line) for line in sink.lines]
    assert [len(r["data"]["events"]) for r in records] == [64, 64, 4, 1]
    assert [r["n"] for r in records] == [64, 128, 132, 133]
    assert recorder.events == [
        (r["n"], hashlib.sha256(line).hexdigest())
        for r, line in zip(records, sink.lines, strict=True)
    ]
    inside = [e["n"] for r in records for e in events_in(r)]
    assert inside == list(range(1, 134))


def _nested(run: Path, edit: Any) -> int:
    """Apply *edit* to the events of the first batch line (a trial's); its line number."""
    found: list[int] = []

    def change(lines: list[bytes]) -> list[bytes]:
        out = []
        for number, line in enumerate(lines, 1):
            record = json.loads(line)
            if record["type"] == BATCH and not found:
                found.append(number)
                edit(record)
                line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
            out.append(line)
        return out

    edit_lines(run / "events.jsonl", change)
    return found[0]


def _renumber(record: dict[str, Any]) -> None:
    record["data"]["events"][1]["n"] = 9


def _orphan(record: dict[str, Any]) -> None:
    record["data"]["events"][2]["parent"] = 7


def _smuggle_match(record: dict[str, Any]) -> None:
    last = record["data"]["events"][-1]
    record["data"]["events"].append({**last, "n": last["n"] + 1, "type": "match"})
    record["n"] = last["n"] + 1


def _misnumber_batch(record: dict[str, Any]) -> None:
    record["n"] += 1


@pytest.mark.doc(
    "docs/evidence.md",
    "each batched event exactly as a line: numbering, parent, the artifacts it names.",
)
@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (_renumber, "event 9 of trial"),
        (_orphan, "parent 7 of event 3 does not exist"),
        (_smuggle_match, "a match event is logged on its own line"),
        (_misnumber_batch, "not a trial's parentless, non-empty batch"),
    ],
    ids=["renumbered", "parent", "match-inside", "batch-n"],
)
def test_an_edited_batched_event_is_named_at_its_line(run: Path, edit: Any, said: str) -> None:
    number = _nested(run, edit)
    problems = verify_run(run).problems
    assert any(p.startswith(f"events.jsonl:{number}:") and said in p for p in problems), problems


def test_a_run_written_one_event_a_line_verifies_and_reads_the_same(
    old_run: Path, shipping_run: Path, tmp_path: Path
) -> None:
    """verify, show (and the viewer: the same ``checked_events``) and ``assay score`` read
    a run of the format before batches exactly as one with them."""
    assert not any(line["type"] == BATCH for line in _lines(old_run))
    assert any(line["type"] == BATCH for line in _lines(shipping_run))
    old_result, new_result = verify_run(old_run), verify_run(shipping_run)
    assert old_result.ok and new_result.ok
    assert old_result.events == new_result.events == len(log_events(old_run))  # not lines

    def shown(run: Path) -> dict[str, list[tuple[Any, ...]]]:
        return {
            bundle["trial"]["trial_id"]: [
                (e["trial"], e["n"], e["parent"], e["type"]) for e in checked_events(run, bundle)
            ]
            for bundle in read_jsonl(run / "bundles.jsonl")
        }

    old, new = shown(old_run), shown(shipping_run)
    assert old == new and all(old.values())
    shows = []
    for number, run in enumerate((old_run, shipping_run)):
        copy = tmp_path / f"copy-{number}"  # ``assay score`` writes its reports
        shutil.copytree(run, copy)
        scored = run_cli("score", copy)
        assert scored.returncode == 0, scored.stdout + scored.stderr
        assert "all equal the recorded ones" in scored.stdout, scored.stdout
        show = run_cli("show", copy, next(iter(old)))
        assert show.returncode == 0, show.stdout + show.stderr
        shows.append([line for line in show.stdout.splitlines() if "sha256:" not in line])
    assert shows[0] == shows[1]  # but the bundle's digest: its list of lines differs


@pytest.mark.doc(
    "docs/evidence.md",
    "A crash loses only the batch a running trial had not written yet; `assay resume`",
)
def test_a_resumed_trial_continues_the_numbering_of_its_logged_batch(tmp_path: Path) -> None:
    """A run stopped mid-trial (its last trial logged, not bundled): ``assay resume`` runs
    that trial again in a new batch numbered after the logged one, and the bundle lists
    both lines."""
    flag = tmp_path / "stop"
    spec = unique_callable_spec(tmp_path / "spec", STOPPING.format(flag=str(flag)), samples=SAMPLES)
    flag.write_text("")
    run = tmp_path / "run"
    with pytest.raises(BaseException) as info:
        run_spec_at(spec, run, max_concurrency=1)
    assert "Stop" in repr(info.value)
    flag.unlink()
    resumed = run_cli("resume", run)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert verify_run(run).ok
    (bundle,) = [b for b in read_jsonl(run / "bundles.jsonl") if b["trial"]["sample_id"] == "last"]
    trial = bundle["trial"]["trial_id"]
    batches = [r for r in _lines(run) if r["trial"] == trial and r["type"] == BATCH]
    assert len(batches) == 2 and bundle["events"] == [[r["n"], ANY] for r in batches]
    second = batches[1]["data"]["events"]
    assert second[0]["n"] == batches[0]["n"] + 1
    assert second[0]["type"] == "trial_started" and second[0]["data"]["resumed"] is True


def test_record_event_data_is_taken_as_it_is_at_the_call(tmp_path: Path) -> None:
    """A batch is written later than ``record_event`` returns: a value JSON cannot hold
    still fails at the call, and a dict changed afterwards is logged as it was."""
    sink = _Lines()
    recorder = TrialRecorder(EventLog([sink]), ArtifactStore(tmp_path / "artifacts"), "t-1")
    with recorder.bound():
        recorder.root = recorder.record("trial_started", {}, parent=None)
        with pytest.raises(TypeError):
            record_event("extra", {"value": object()})
        data = {"step": 1}
        record_event("extra", data)
        data["step"] = 2
        recorder.record("trial_finished", {})
    (line,) = sink.lines
    kinds = [(e["type"], e["data"]) for e in events_in(json.loads(line))]
    assert kinds == [("trial_started", {}), ("extra", {"step": 1}), ("trial_finished", {})]
