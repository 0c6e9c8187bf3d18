"""Reopening an unfinished run: repair torn tails, find what finished, resume the chain.

A crash or ``kill -9`` can leave the last line of a JSONL file half-written. That line is
never accepted: it is cut off (and reported), which can only drop a record that was not
yet complete. A trial counts as finished when its bundle line is whole and the log holds
the events it lists (a power cut may have lost them); its score lines follow it, and any
missing ones are recomputed from the bundle by the caller. Events of trials that did not
finish stay in the log (they happened); a re-run of such a trial continues its
numbering, so its bundle covers every event it ever had.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads, sha256_hex
from assay.evidence._bundle import bundle_digest
from assay.evidence._framed import expand_run
from assay.evidence._index import BUNDLE_INDEX, pack_index
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, LEFTOVER, SCORES
from assay.evidence._log import GENESIS, after_seal, events_in
from assay.evidence._pack import PackError, pack_names, scan_headers, whole_length
from assay.evidence._usage import Usage


class ResumePoint(msgspec.Struct):
    """Where an unfinished run stands.

    Attributes:
        head: hash of the last whole event record; the next one chains to it.
        count: number of whole event records.
        run_events: how many run-level (``trial: null``) events there are.
        finished: ids of trials whose bundle is whole and self-consistent.
        scored: ``score_id``s already in ``scores.jsonl``.
        orphans: events of trials that started but did not finish, by trial id (without
            ``match`` events), and the last event number each used.
        last_event: the last event number of each finished trial (for late ``match``es).
        repaired: one line per torn record that was cut off.
        orphan_usage: the usage of the orphans' ``sampling`` events, so a re-run's bundle
            still sums every call its event list holds.
    """

    head: str
    count: int
    run_events: int
    finished: set[str]
    scored: set[str]
    orphans: dict[str, tuple[list[tuple[int, str]], int]]
    last_event: dict[str, int]
    repaired: list[str]
    orphan_usage: dict[str, Usage] = {}


def find_resume_point(path: Path) -> ResumePoint:
    """Repair torn tails in *path* and report what finished and where the chain ends."""
    repaired: list[str] = []
    _drop_indexes(path)
    _drop_leftovers(path)
    expand_run(path)  # a sealed run's compacted files: resume cuts and appends plain ones
    for name in (EVENTS, BUNDLES, SCORES):
        if cut := _cut_torn_tail(path / name):
            repaired.append(f"{name}: cut a torn last record ({cut} bytes)")
    for name in pack_names(path / ARTIFACTS):
        pack = path / ARTIFACTS / name
        if (size := pack.stat().st_size) > (keep := whole_length(pack)):
            with open(pack, "r+b") as handle:
                handle.truncate(keep)
            repaired.append(f"{ARTIFACTS}/{name}: cut a torn last record ({size - keep} bytes)")
    tails = _finished_trials(path / BUNDLES)
    finished = set(tails)
    wanted, logged = set(tails.values()), set()
    if any("pack" in line for line in repaired):
        _check_finished_artifacts(path, finished)
    head, count, run_events = GENESIS, 0, 0
    bound: set[str] = set()  # score lines a whole ``match`` event binds
    orphans: dict[str, tuple[list[tuple[int, str]], int]] = {}
    last_event: dict[str, int] = {}
    usage: dict[str, Usage] = {}
    for line in _lines(path / EVENTS):
        record = loads(line)
        head = sha256_hex(line)
        count += 1
        if head in wanted:
            logged.add(head)
        trial = record["trial"]
        if trial is None:
            run_events += 1
        elif trial in finished:
            last_event[trial] = record["n"]
            if record["type"] == "match":
                bound.add(record["data"].get("record"))
        else:
            events, _ = orphans.get(trial, ([], 0))
            if not after_seal(record["type"]):
                events.append((record["n"], head))
            orphans[trial] = (events, record["n"])  # a batch line: its last event's n
            for event in events_in(record):
                if event["type"] == "sampling":
                    usage.setdefault(trial, Usage()).add_sampling(event["data"])
    if lost := _cut_unlogged_bundles(path, {t for t, last in tails.items() if last not in logged}):
        again = find_resume_point(path)  # those trials are unfinished now: walk again
        again.repaired = [*repaired, *lost, *again.repaired]
        return again
    if cut := _cut_unbound_scores(path / SCORES, bound):
        repaired.append(f"{SCORES}: cut {cut} score record(s) whose match event was torn")
    scored = {loads(line)["score_id"] for line in _lines(path / SCORES)}
    point = ResumePoint(head, count, run_events, finished, scored, orphans, last_event, repaired)
    point.orphan_usage = usage
    return point


def _drop_indexes(path: Path) -> None:
    """Remove the indexes a kill while sealing left behind.

    Indexes are written when a run is sealed and listed in its manifest; an unsealed
    run's are not evidence, may be torn, and would hide records from a lookup that
    trusts them. Sealing the resumed run writes them again from the files.
    """
    (path / BUNDLE_INDEX).unlink(missing_ok=True)
    artifacts = path / ARTIFACTS
    for name in pack_names(artifacts):
        pack_index(artifacts / name).unlink(missing_ok=True)


def _drop_leftovers(path: Path) -> None:
    """Remove the temporary files (``.NAME.tmp``) of writes a kill interrupted.

    Every such write (the manifest, the plan, a report, an index, a large artifact) is
    renamed into place only once whole, so a leftover never holds anything the run
    needs; removed here, under the run's lock, a completed run holds none (``verify``
    names any file it does not expect in a sealed run)."""
    artifacts = path / ARTIFACTS
    folders = [path, artifacts]
    if artifacts.is_dir():
        folders += [artifacts / name for name in os.listdir(artifacts) if len(name) == 2]
    for folder in folders:
        if folder.is_dir():
            for name in os.listdir(folder):
                if LEFTOVER.fullmatch(name):
                    (folder / name).unlink(missing_ok=True)


def _cut_unbound_scores(path: Path, bound: set[str]) -> int:
    """Cut ``scores.jsonl`` from its first line no whole ``match`` event binds.

    assay logs a score's match event before the score line reaches the disk, so only a
    torn tail of the event log leaves such lines; they are judged again from their bundle
    (with a new match event), never kept unbound. Returns the number of lines cut."""
    lines = _lines(path)
    for number, line in enumerate(lines):
        if sha256_hex(line) not in bound:
            with open(path, "r+b") as handle:
                handle.truncate(sum(len(kept) + 1 for kept in lines[:number]))
            return len(lines) - number
    return 0


def _check_finished_artifacts(path: Path, finished: set[str]) -> None:
    """After a pack was cut: every artifact a whole bundle names must still be there.

    assay writes a bundle only after its artifacts reached the disk, so this can only fail
    if the evidence was damaged from outside; then resuming would build on a lie."""
    from assay.errors import EvidenceError

    present: set[str] = set()
    for name in pack_names(path / ARTIFACTS):
        for item in scan_headers(path / ARTIFACTS / name):
            if not isinstance(item, PackError):
                present.add(item.sha256)
    for line in _lines(path / BUNDLES):
        bundle = loads(line)
        for sha in bundle.get("artifacts", {}).values():
            loose = path / ARTIFACTS / sha[:2] / sha
            if sha not in present and not loose.exists():
                reason = f"artifact {sha} of finished trial {bundle['trial']['trial_id']} is gone"
                raise EvidenceError("run.not_a_run", path=str(path), reason=reason)


def _finished_trials(path: Path) -> dict[str, str]:
    """The trials whose bundle is whole and self-consistent, each with the hash of the
    last event its bundle lists (the log must hold that one, and so every earlier one)."""
    finished = {}
    for line in _lines(path):
        bundle = loads(line)
        if bundle_digest(bundle) == bundle.get("digest"):
            events = bundle.get("events") or [[0, GENESIS]]
            finished[bundle["trial"]["trial_id"]] = events[-1][1]
    return finished


def _cut_unlogged_bundles(path: Path, unlogged: set[str]) -> list[str]:
    """Cut ``bundles.jsonl`` from its first bundle whose events the log lacks, and
    ``scores.jsonl`` from the first score of a trial so cut.

    assay writes a bundle only after its events, but lines are not fsync'd one by one:
    a power cut can keep a bundle and lose the end of the event log. Such a trial did
    not finish as far as the evidence goes; it is run again (its logged events kept),
    and the finished trials whose lines were cut with it are judged again."""
    if not unlogged:
        return []
    cut_trials = _cut_lines_from(
        path / BUNDLES, lambda record: record["trial"]["trial_id"], unlogged
    )
    scores = _cut_lines_from(path / SCORES, lambda record: record["trial_id"], cut_trials)
    return [
        f"{BUNDLES}: cut {len(cut_trials)} bundle(s) whose events the log lost",
        f"{SCORES}: cut the score records of {len(scores)} trial(s), from the first of those",
    ]


def _cut_lines_from(path: Path, key: Callable[[Any], str], found: set[str]) -> set[str]:
    """Truncate the JSONL file *path* at its first line whose *key* is in *found*;
    the keys of the lines cut."""
    lines = _lines(path)
    for number, line in enumerate(lines):
        if key(loads(line)) in found:
            with open(path, "r+b") as handle:
                handle.truncate(sum(len(kept) + 1 for kept in lines[:number]))
            return {key(loads(cut)) for cut in lines[number:]}
    return set()


def _lines(path: Path) -> list[bytes]:
    try:
        return [line for line in path.read_bytes().split(b"\n") if line]
    except FileNotFoundError:
        return []


def _cut_torn_tail(path: Path) -> int:
    """Truncate a last line that lacks its newline or is not JSON; return bytes cut."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    if not data:
        return 0
    keep = len(data)
    if not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
    else:
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        try:
            loads(data[start:-1])
        except ValueError:
            keep = start
    if keep == len(data):
        return 0
    with open(path, "r+b") as handle:
        handle.truncate(keep)
    return len(data) - keep
