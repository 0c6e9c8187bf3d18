"""The listed trials' details and HTML read while a run goes on (``DetailsAhead``): the
page made from them is the page ``read_details`` gives at the end, byte for byte,
whatever the looks saw (torn lines, a trial listed then dropped, a later line of a
trial, a line that cannot be read)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.evidence import ArtifactStore
from assay.evidence._framed import read_evidence
from assay.report import _details_ahead, read_report, to_html
from assay.report._details import read_details
from assay.report._details_ahead import DetailsAhead
from assay.report._model import TrialRow
from tests.helpers import run_spec_at, unique_callable_spec

ANSWERS = """
def answer(text):
    return text if not text.endswith("7") else "seven"
"""
SAMPLES = [{"id": f"s{i:03d}", "input": f"q{i}", "expected": f"q{i}"} for i in range(120)]


def _live(tmp_path: Path) -> tuple[Path, list[bytes], object]:
    """A finished run's report, and a folder with its artifacts and no bundles yet, to
    write its bundle lines into as a live run does."""
    spec = unique_callable_spec(tmp_path / "spec", ANSWERS, samples=SAMPLES, gate={})
    run_spec_at(spec, tmp_path / "run")
    live = tmp_path / "live"
    shutil.copytree(tmp_path / "run" / "artifacts", live / "artifacts")
    lines = read_evidence(tmp_path / "run" / "bundles.jsonl").splitlines(keepends=True)
    return live, lines, read_report(tmp_path / "run")


def _append(live: Path, data: bytes) -> None:
    with open(live / "bundles.jsonl", "ab") as handle:
        handle.write(data)


def _in_line_order(report: object, lines: list[bytes]) -> list[TrialRow]:
    """The report's rows in the order of their bundle lines (the order trials finish)."""
    by_id = {row.trial_id: row for row in report.trials}  # type: ignore[attr-defined]
    return [by_id[json.loads(line)["trial"]["trial_id"]] for line in lines]


@pytest.mark.parametrize("chunk", [1 << 20, 100])  # 100: every line longer than a read
def test_the_page_made_ahead_is_the_page_read_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(_details_ahead, "FETCH_AT", 8)  # artifacts read at each look
    monkeypatch.setattr(_details_ahead, "CHUNK", chunk)
    live, lines, report = _live(tmp_path)
    rows = _in_line_order(report, lines)
    store = ArtifactStore(live / "artifacts", write=False)
    ahead = DetailsAhead(live, store)
    _append(live, b"".join(lines[:40]) + lines[40][:30])  # a torn line at the end
    ahead.look(rows[:40])  # the first look reads nothing: its trials may be unjudged
    _append(live, lines[40][30:] + b"".join(lines[41:80]))
    ahead.look(rows[:40])  # reads the 40 whole lines there were at the previous look
    assert len(ahead.made) == 40
    dropped = rows[5].trial_id  # no longer listed, then a later line of it is written
    again = json.loads(lines[5])
    again["observation"]["expected"] = "changed"
    changed = json.loads(lines[10])  # a listed trial's later line: its detail changes
    changed["observation"]["expected"] = "changed too"
    late = (json.dumps(again) + "\n" + json.dumps(changed) + "\n").encode()
    _append(live, late + b"".join(lines[80:]))
    ahead.look([r for r in rows if r.trial_id != dropped])
    ahead.look([r for r in rows if r.trial_id != dropped])
    assert dropped not in ahead.details
    assert len(ahead.made) > 60  # most were made ahead

    kept = {r.trial_id for r in rows if r.trial_id != dropped}
    assert ahead.finish(kept) == read_details(live, kept, store)
    assert not ahead.broken and kept <= ahead.details.keys()  # none read again
    assert ahead.details[rows[10].trial_id].expected == "changed too"
    page = to_html(report, ahead.finish(kept), ahead.made)  # type: ignore[arg-type]
    assert page == to_html(report, read_details(live, kept, store))  # type: ignore[arg-type]

    listed = {r.trial_id for r in rows}  # the dropped trial listed again: all read again
    assert ahead.finish(listed) == read_details(live, listed, store)
    assert ahead.finish(listed)[dropped].expected == "changed"


def test_a_line_that_cannot_be_read_makes_the_end_read_as_before(tmp_path: Path) -> None:
    live, lines, report = _live(tmp_path)
    rows = _in_line_order(report, lines)
    store = ArtifactStore(live / "artifacts", write=False)
    ahead = DetailsAhead(live, store)
    listed = {r.trial_id for r in rows}
    _append(live, b"".join(lines[:50]) + b'{"not a bundle": 1}\n')
    ahead.look(rows)
    _append(live, b"".join(lines[50:]))
    ahead.look(rows)
    assert ahead.broken
    assert ahead.finish(listed) == read_details(live, listed, store) == {}


def test_a_run_s_report_page_is_the_one_its_evidence_gives(tmp_path: Path) -> None:
    """A run long enough for several looks: report.html as read_details makes it."""
    slow = "import time\n\ndef answer(text):\n    time.sleep(0.02)\n    return text\n"
    spec = unique_callable_spec(tmp_path / "spec", slow, samples=SAMPLES, gate={})
    run_spec_at(spec, tmp_path / "run", max_concurrency=4)
    run = tmp_path / "run"
    report = read_report(run)
    details = read_details(run, {row.trial_id for row in report.trials})
    assert len(details) == len(SAMPLES)
    assert (run / "report.html").read_bytes() == to_html(report, details).encode()


def test_a_look_that_fails_does_not_fail_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error in a look (anything: it only saves time) stops the looks, and the end
    reads every detail as before."""
    import anyio

    from assay.pipeline import _ahead

    class Rows:
        @property
        def rows(self) -> list[TrialRow]:
            raise RuntimeError("a look's own bug")

    class Run:
        rows = Rows()

    monkeypatch.setattr(_ahead, "AHEAD_AFTER", 0)
    ahead = DetailsAhead(tmp_path, ArtifactStore(tmp_path / "artifacts", write=False))

    async def main() -> None:
        ramped = anyio.Event()
        ramped.set()
        await _ahead.work_ahead(Run(), ahead, ramped)  # type: ignore[arg-type]

    anyio.run(main)  # returns: the looks stop
    assert ahead.broken


def test_the_template_loads_once_the_first_trials_are_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Jinja and the report's template load in the wait for the first answers, as soon
    as the executor has started the first trials (and a few passes of the loop let
    their requests out), not ``AHEAD_AFTER`` later in a thread that would take the GIL
    from the loop while answers flow."""
    import anyio

    from assay.pipeline import _ahead

    events: list[str] = []
    monkeypatch.setattr(_ahead, "warm_up", lambda: events.append("loaded"))
    monkeypatch.setattr(_ahead, "AHEAD_AFTER", 3600)

    async def main() -> None:
        ramped = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(_ahead.work_ahead, object(), None, ramped)
            for _ in range(5):
                await anyio.sleep(0)
            events.append("ramped")
            ramped.set()
            for _ in range(2 * _ahead.RAMP_PASSES):
                await anyio.sleep(0)
            group.cancel_scope.cancel()

    anyio.run(main)
    assert events == ["ramped", "loaded"]


def test_lines_handed_over_give_the_page_read_at_the_end_without_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh run hands over its listed trials' lines as it judges them: the details
    are those ``read_details`` gives, and the file is never read for them."""
    monkeypatch.setattr(_details_ahead, "FETCH_AT", 8)
    live, lines, report = _live(tmp_path)
    rows = _in_line_order(report, lines)
    ahead = DetailsAhead(live, ArtifactStore(live / "artifacts", write=False), handed=True)
    for line in lines[:60]:
        ahead.offer(line)
    ahead.look(rows[:60])
    assert len(ahead.made) == 60
    for line in lines[60:]:
        ahead.offer(line)
    listed = {r.trial_id for r in rows[10:]}  # ten listed, then dropped
    made = ahead.finish(listed)

    assert not (live / "bundles.jsonl").exists() and not ahead.broken
    _append(live, b"".join(lines))
    assert made == read_details(live, listed, ArtifactStore(live / "artifacts", write=False))


@pytest.mark.parametrize("cap", [1000, 40])  # 40: failures past the cap evict passing rows
def test_a_fresh_run_s_page_is_made_of_the_lines_it_handed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    from assay.pipeline import _ahead
    from assay.report import _model

    read: list[object] = []

    def never(*args: object) -> object:
        read.append(args)
        raise AssertionError("a fresh run read its bundle lines back")

    monkeypatch.setattr(_model, "MAX_TRIAL_ROWS", cap)
    monkeypatch.setattr(_ahead, "AHEAD_AFTER", 0.005)
    monkeypatch.setattr(_details_ahead, "FETCH_AT", 8)
    monkeypatch.setattr(_details_ahead, "shown_bundles", never)
    monkeypatch.setattr(_details_ahead, "read_details", never)
    slow = "import time\n\ndef answer(text):\n    time.sleep(0.002)\n" + ANSWERS.split(":", 1)[1]
    spec = unique_callable_spec(tmp_path / "spec", slow, samples=SAMPLES, gate={})
    run_spec_at(spec, tmp_path / "run", max_concurrency=4)

    run = tmp_path / "run"
    report = read_report(run)
    assert len(report.trials) == min(cap, len(SAMPLES))
    assert any(row.scores != {"exact": "passed"} for row in report.trials)
    details = read_details(run, {row.trial_id for row in report.trials})
    assert (run / "report.html").read_bytes() == to_html(report, details).encode()
    assert read == []


def test_a_resumed_run_reads_its_earlier_trials_lines_for_its_page(tmp_path: Path) -> None:
    from tests.helpers import interrupted_at_last_trial, run_cli

    run = interrupted_at_last_trial(tmp_path, '"wrong" if text == "q0" else text')
    (tmp_path / "go").touch()
    resumed = run_cli("resume", run, cwd=tmp_path)
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr  # s0 is wrong

    report = read_report(run)
    details = read_details(run, {row.trial_id for row in report.trials})
    assert len(details) == 3 and {d.answer for d in details.values()} >= {"wrong", "q1"}
    assert (run / "report.html").read_bytes() == to_html(report, details).encode()


def test_a_look_pauses_between_slices_and_makes_what_a_whole_look_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network run's loop is let run between a look's slices (a whole look held it
    for up to 18 ms): the pauses change when rows are made, not which."""
    monkeypatch.setattr(_details_ahead, "FETCH_AT", 8)
    monkeypatch.setattr(_details_ahead, "FETCH_SLICE", 16)
    monkeypatch.setattr(_details_ahead, "SLICE", 10)
    live, lines, report = _live(tmp_path)
    rows = _in_line_order(report, lines)
    store = ArtifactStore(live / "artifacts", write=False)
    sliced, whole = (DetailsAhead(live, store, handed=True) for _ in range(2))
    for ahead in (sliced, whole):
        for line in lines:
            ahead.offer(line)

    pauses = sum(1 for _ in sliced.looking(rows))
    whole.look(rows)

    assert pauses == -(-len(lines) // 16) + len(lines) // 10  # 120 trials: 8 reads, 12 makes
    assert sliced.made == whole.made and len(sliced.made) == len(lines)
    assert sliced.details == whole.details


def test_a_remainder_nothing_joins_is_read_by_the_next_look_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer than ``FETCH_AT`` listed trials (a full list: nothing more will come) are
    read by the look after the one that saw them last grow, not left for the end; at
    most ``SETTLED_FETCHES`` times a run, so a trickle of failures costs bounded scans."""
    monkeypatch.setattr(_details_ahead, "FETCH_AT", 8)
    live, lines, report = _live(tmp_path)
    rows = _in_line_order(report, lines)
    ahead = DetailsAhead(live, ArtifactStore(live / "artifacts", write=False), handed=True)
    fetched = []
    for start, stop in ((0, 5), (5, 8), (8, 10)):
        for line in lines[start:stop]:
            ahead.offer(line)
        ahead.look(rows[:stop])  # they came since the look before: gathered, not read
        assert len(ahead.details) == start
        ahead.look(rows[:stop])  # none came since: read, the first SETTLED_FETCHES times
        fetched.append(len(ahead.details))
    assert _details_ahead.SETTLED_FETCHES == 2
    assert fetched == [5, 8, 8]  # the third remainder waits for the end
    listed = {r.trial_id for r in rows[:10]}
    assert ahead.finish(listed) == read_details(
        tmp_path / "run", listed, ArtifactStore(tmp_path / "run" / "artifacts", write=False)
    )


def test_a_look_that_would_find_nothing_new_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a big run's list is full, the looks went over its rows for nothing: one is
    skipped while no row was kept since the last began and the reader is ``idle``
    (nothing gathered unread), and taken again as soon as either changes."""
    import anyio

    from assay.pipeline import _ahead
    from assay.report import TrialRows

    rows = TrialRows(10)
    trial = {"index": 0, "trial_id": "t-0", "target_id": "x", "sample_id": "s0", "repetition": 1}
    bundle = {"trial": trial, "state": "completed", "digest": "sha256:0"}

    class Spy:
        def __init__(self, scope: anyio.CancelScope) -> None:
            self.scope, self.looks, self.asked, self.broken = scope, [], 0, False

        def idle(self) -> bool:
            self.asked += 1
            if self.asked == 1:  # kept after the check: the next look is taken
                rows.add_scored(bundle, "s", "passed", "")
            if self.asked == 3:
                self.scope.cancel()
            return self.asked != 2  # a line gathered unread: taken, rows unchanged

        def looking(self, listed: list[TrialRow]) -> list[None]:
            self.looks.append(len(listed))
            if len(self.looks) > 5:  # never idle: the loop would go on
                self.scope.cancel()
            return []

    monkeypatch.setattr(_ahead, "warm_up", lambda: None)
    monkeypatch.setattr(_ahead, "AHEAD_AFTER", 0)
    looks: list[int] = []

    async def main() -> None:
        ramped = anyio.Event()
        ramped.set()
        with anyio.CancelScope() as scope:
            spy = Spy(scope)
            await _ahead.work_ahead(type("Run", (), {"rows": rows})(), spy, ramped)  # type: ignore[arg-type]
        looks.extend(spy.looks)

    anyio.run(main)
    assert rows.changes == 1
    assert looks == [0, 1, 1]  # the first; a row kept; a line unread; then skipped
