"""The viewer's per-run table: what it reads is what the sealed manifest vouches for, and
what it finds for one trial (its score lines, its span of the event log) is exactly what
a whole read of the run finds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.evidence import checked_events
from assay.view._rows import Query
from assay.view._table import TrialTable
from tests.helpers import read_jsonl
from tests.view._support import many_trials_run, shipping_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("table")
    shipping_run(root / "runs")
    many_trials_run(root / "spec", root / "runs", count=60)
    return root / "runs"


def test_each_trial_span_holds_exactly_its_checked_events(runs: Path) -> None:
    table = TrialTable(runs / "many")
    for bundle in read_jsonl(runs / "many" / "bundles.jsonl"):
        at = bundle["trial"]["index"]
        whole = checked_events(runs / "many", bundle)
        assert len(whole) == bundle["events"][-1][0]  # every event, from 1 to the last
        assert checked_events(runs / "many", bundle, table.event_span(at)) == whole


def test_score_lines_are_read_at_their_offsets(runs: Path) -> None:
    table = TrialTable(runs / "shipping")
    records = read_jsonl(runs / "shipping" / "scores.jsonl")
    for at, trial_id in enumerate(table.trial_ids):
        assert table.score_records(at) == [r for r in records if r["trial_id"] == trial_id]


def test_an_edited_file_is_named_and_a_line_that_is_no_record_is_counted(
    runs: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "shipping"
    shutil.copytree(runs / "shipping", copy)
    plan = copy / "plan.jsonl"
    plan.write_bytes(plan.read_bytes().replace(b'"repetition":1', b'"repetition":2', 1))
    bundles = copy / "bundles.jsonl"
    bundles.write_bytes(bundles.read_bytes() + b"not a record\n")
    table = TrialTable(copy)
    assert table.problems == [
        "plan.jsonl does not match the digest in manifest.json",
        "bundles.jsonl does not match the digest in manifest.json",
        "bundles.jsonl: 1 line(s) are not records",
    ]
    assert len(table.page(Query()).rows) == 6  # the other lines are still shown


def test_an_unsealed_run_is_read_without_digests(runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "shipping"
    shutil.copytree(runs / "shipping", copy)
    (copy / "manifest.json").unlink()  # no manifest: nothing to compare with
    bundles = copy / "bundles.jsonl"
    lines = bundles.read_bytes().splitlines(keepends=True)
    bundles.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # a torn last line
    table = TrialTable(copy)
    assert table.problems == []
    states = [table.row(at).state for at in range(len(table))]
    assert states.count("pending") == 1 and states.count("completed") == 5
