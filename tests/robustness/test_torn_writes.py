"""Torn writes: a half-written last record is reported, then repaired by resume.

A crash can stop a write half-way. Starting from a run killed with ``kill -9`` (and one
stopped by Ctrl-C), each case cuts the last record of one file in half: the event log,
the bundles, the scores, or an artifact pack. Then:

- ``assay verify`` reports it, naming the file (never silently accepted), and
  ``assay gate`` refuses to judge;
- ``assay resume`` cuts exactly the torn record (every whole record before it is kept
  byte for byte), re-runs the trial it belonged to and no finished one;
- the final run verifies and equals an uninterrupted run.

An artifact that a *whole* bundle names cannot be torn by a crash (bundles reach the disk
after their artifacts); found torn, it is damage from outside, and resume refuses it.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.evidence._framed import expand_run, read_evidence
from tests.helpers import (
    error_line,
    finished_trials,
    held_spec,
    results_view,
    run_cli,
    start_cli,
    tear_last_line,
    trial_starts,
    wait_for,
    whole_records,
)

TRIALS = 600
MAGIC = b"assay-artifact "


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("torn") / "spec"
    # the second half of the trials waits while HOLD is set
    return held_spec(folder, TRIALS, held_from=300, pause=0.004)


@pytest.fixture(scope="module")
def reference(spec: Path) -> dict[str, object]:
    out = spec.parent.parent / "reference"
    proc = run_cli("run", spec, "-o", out, "-j", "8")
    assert proc.returncode == 0, proc.stderr
    return results_view(out)


def _stopped_run(spec: Path, out: Path, sig: signal.Signals) -> Path:
    """A run stopped by *sig* once some bundles are on disk, some trials still to run."""
    proc = start_cli("run", spec, "-o", out, "-j", "8", env={"HOLD": str(out) + ".never"})
    assert wait_for(lambda: len(finished_trials(out)) > 0, timeout=60)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert 0 < len(finished_trials(out)) < TRIALS
    expand_run(out)  # an interrupted run's seal compacted its files: resume's first step
    _cut_to_whole_records(out)
    return out


def pack_records(path: Path) -> list[tuple[int, str, int, int]]:
    """``(header offset, sha256, payload offset, size)`` of each whole record of a pack."""
    data = path.read_bytes()
    records, position = [], 0
    while position < len(data):
        end = data.find(b"\n", position)
        header = data[position:end].split(b" ") if end >= 0 else []
        if len(header) != 3 or not data[position:].startswith(MAGIC):
            break
        size = int(header[2])
        start = end + 1
        if data[start + size : start + size + 1] != b"\n":
            break
        records.append((position, header[1].decode(), start, size))
        position = start + size + 1
    return records


def _cut_to_whole_records(run: Path) -> None:
    """Drop whatever torn tail the kill itself left, so each case tears one known record."""
    for name in ("events.jsonl", "bundles.jsonl", "scores.jsonl", "plan.jsonl"):
        path = run / name
        data = path.read_bytes()
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    for pack in (run / "artifacts").glob("pack-*.bin"):
        records = pack_records(pack)
        keep = records[-1][2] + records[-1][3] + 1 if records else 0
        with open(pack, "r+b") as handle:
            handle.truncate(keep)


@pytest.fixture(scope="module")
def killed(spec: Path) -> Path:
    return _stopped_run(spec, spec.parent.parent / "killed", signal.SIGKILL)


@pytest.fixture(scope="module")
def interrupted(spec: Path) -> Path:
    run = _stopped_run(spec, spec.parent.parent / "interrupted", signal.SIGINT)
    assert json.loads((run / "manifest.json").read_bytes())["status"] == "interrupted"
    return run


@dataclass
class Torn:
    """What a case tore: the file, the whole bytes before the torn record, its trial."""

    name: str
    kept: bytes
    trial: str | None = None


def tear_events(run: Path) -> Torn:
    last = json.loads((run / "events.jsonl").read_bytes().splitlines()[-1])
    return Torn("events.jsonl", tear_last_line(run / "events.jsonl"), last["trial"])


def tear_bundles(run: Path) -> Torn:
    """The last bundle torn; its score lines (written after it, never before) absent."""
    last = json.loads((run / "bundles.jsonl").read_bytes().splitlines()[-1])
    trial = last["trial"]["trial_id"]
    kept = tear_last_line(run / "bundles.jsonl")
    scores = (run / "scores.jsonl").read_bytes().splitlines(keepends=True)
    mine = [i for i, line in enumerate(scores) if json.loads(line)["trial_id"] == trial]
    assert mine == list(range(len(scores) - len(mine), len(scores)))  # they were the tail
    (run / "scores.jsonl").write_bytes(b"".join(scores[: len(scores) - len(mine)]))
    return Torn("bundles.jsonl", kept, trial)


def tear_scores(run: Path) -> Torn:
    return Torn("scores.jsonl", tear_last_line(run / "scores.jsonl"))


def _last_pack(run: Path) -> Path:
    return sorted((run / "artifacts").glob("pack-*.bin"))[-1]


def tear_pack_of_unfinished_trial(run: Path) -> Torn:
    """Half of a record appended: an artifact of a trial that had not finished yet."""
    pack = _last_pack(run)
    kept = pack.read_bytes()
    payload = b'"an output whose trial was still running"'
    record = MAGIC + b"%s %d\n%s\n" % (b"0" * 64, len(payload), payload)
    pack.write_bytes(kept + record[: len(record) // 2])
    return Torn(f"artifacts/{pack.name}", kept)


def tear_pack_of_finished_trial(run: Path) -> Torn:
    """The last pack record that a whole bundle names, cut in half (and all after it)."""
    pack = _last_pack(run)
    named = {sha for b in whole_records(run / "bundles.jsonl") for sha in b["artifacts"].values()}
    offset, _, start, size = [r for r in pack_records(pack) if r[1] in named][-1]
    data = pack.read_bytes()
    pack.write_bytes(data[: start + size // 2])
    return Torn(f"artifacts/{pack.name}", data[:offset])


@dataclass
class Case:
    base: str
    tear: Callable[[Path], Torn]


CASES = [
    pytest.param(Case("killed", tear_events), id="killed-events.jsonl"),
    pytest.param(Case("interrupted", tear_events), id="interrupted-events.jsonl"),
    pytest.param(Case("killed", tear_bundles), id="killed-bundles.jsonl"),
    pytest.param(Case("interrupted", tear_bundles), id="interrupted-bundles.jsonl"),
    pytest.param(Case("killed", tear_scores), id="killed-scores.jsonl"),
    pytest.param(Case("killed", tear_pack_of_unfinished_trial), id="killed-pack-unfinished"),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.doc(
    "docs/evidence.md",
    "Bundle and score lines are written only after the event log (and every artifact they name) "
    "has reached the operating system, at most 0.2 s after the trial ends.",
    "After a crash or `kill -9`, `assay resume RUN` takes the run's lock, cuts a half-written last",
)
def test_a_torn_record_is_reported_then_repaired_by_resume(
    case: Case,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    reference: dict[str, object],
) -> None:
    run = tmp_path / "run"
    shutil.copytree(request.getfixturevalue(case.base), run)
    # whole records only: it verifies, as the unfinished run it is (exit 3)
    assert run_cli("verify", run).returncode == 3
    torn = case.tear(run)
    done, starts = finished_trials(run), trial_starts(run)

    # detected, named, never silently accepted
    verify = run_cli("verify", run)
    assert verify.returncode == 4, verify.stdout
    assert f"- {torn.name}" in verify.stdout, verify.stdout
    gate = run_cli("gate", run)
    assert gate.returncode == 4 and "Traceback" not in gate.stderr, gate.stderr

    # repaired: only the torn record goes, its trial is re-run, no finished one is
    resumed = run_cli("resume", run, "-j", "8", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert read_evidence(run / torn.name).startswith(torn.kept)
    (event,) = [e for e in whole_records(run / "events.jsonl") if e["type"] == "run_resumed"]
    assert any(torn.name in line for line in event["data"]["repaired"]), event["data"]
    after = trial_starts(run)
    for trial in done:
        assert after[trial] == starts[trial], trial
    if torn.trial is not None and torn.trial not in done:
        assert after[torn.trial] == starts.get(torn.trial, 0) + 1

    final = run_cli("verify", run)
    assert final.returncode == 0, final.stdout
    assert results_view(run) == reference


def test_a_torn_artifact_of_a_finished_trial_is_refused_not_built_on(
    killed: Path, tmp_path: Path
) -> None:
    """A crash cannot tear an artifact a whole bundle names (bundles follow their
    artifacts to disk), so this is damage from outside: resume must not accept it."""
    run = tmp_path / "run"
    shutil.copytree(killed, run)
    torn = tear_pack_of_finished_trial(run)
    verify = run_cli("verify", run)
    assert verify.returncode == 4 and f"- {torn.name}" in verify.stdout, verify.stdout
    resumed = run_cli("resume", run)
    assert resumed.returncode == 4, resumed.stderr
    line = error_line(resumed)
    assert "finished trial" in line and "gone" in line, line
    assert (run / torn.name).read_bytes() == torn.kept  # only the torn record was cut
    assert run_cli("verify", run).returncode == 4  # and the run still does not verify


@pytest.mark.doc(
    "docs/evidence.md",
    "The indexes (`bundles.idx`, `artifacts/*.idx`) of the unsealed run are deleted and written "
    "again when it is sealed:",
)
def test_indexes_a_kill_while_sealing_tore_are_not_trusted_by_resume(
    killed: Path, tmp_path: Path, reference: dict[str, object]
) -> None:
    """Sealing writes the indexes last; a kill part-way through leaves an index that lists
    only some records. Resume must not look artifacts up in it (it once did, and failed
    with 'No such file or directory' for an artifact the torn index did not list)."""
    from assay.evidence import write_bundle_index, write_pack_index

    run = tmp_path / "run"
    shutil.copytree(killed, run)
    for pack in (run / "artifacts").glob("pack-*.bin"):
        index = write_pack_index(pack)
        data = index.read_bytes()
        index.write_bytes(data[: len(data) // 96 * 48])  # half its whole records
    write_bundle_index(run / "bundles.jsonl", run / "bundles.idx")
    (run / "bundles.idx").write_bytes((run / "bundles.idx").read_bytes()[:20])
    resumed = run_cli("resume", run, "-j", "8", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert run_cli("verify", run).returncode == 0
    assert results_view(run) == reference
