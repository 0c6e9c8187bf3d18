"""One trial's evidence, found by trial or sample id and checked before it is shown.

Looking at a trial is how a failure gets understood, so what is shown must be what was
recorded: a bundle is shown only if it still hashes to its own digest, its output only
if the bytes hash to the digest the bundle names, and its score lines only if they name
that bundle. Anything else is an ``EvidenceError`` (exit 4), not a quiet display of
edited bytes. A sealed run is read through its indexes (a trial in well under a
millisecond); an unsealed one, or a sample id, by one pass over ``bundles.jsonl``.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from assay._digest import loads
from assay.errors import EvidenceError
from assay.evidence._bundle import bundle_digest
from assay.evidence._framed import open_evidence
from assay.evidence._index import BUNDLE_INDEX, find_bundle_line
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, SCORES
from assay.evidence._log import events_in
from assay.evidence._store import ArtifactStore

_TRIAL_ID = re.compile(r"t-[0-9a-f]{24}")


class TrialEvidence(msgspec.Struct):
    """A trial's bundle, its output bytes (None if it has none), its score records and
    the sample it was given (``input``, ``expected``, ``metadata``: what the target saw,
    less hidden fields, plus the expected answer)."""

    bundle: dict[str, Any]
    output: bytes | None
    scores: list[dict[str, Any]]
    sample: dict[str, Any] | None
    folder: Path | None = None  # the run folder it was read from (a shard of a merged run)


def read_trial(run: Path, trial_id: str) -> tuple[dict[str, Any], bytes | None] | None:
    """One trial's bundle and output bytes, checked (None if the run has no such trial)."""
    indexed = find_bundle_line(run / BUNDLES, run / BUNDLE_INDEX, trial_id)
    line = indexed
    if line is None:  # an unsealed run has no index yet
        line = next(_lines_with(run / BUNDLES, f'"trial_id":"{trial_id}"'.encode()), None)
    if line is None:
        return None
    bundle = _checked_bundle(run, line)
    if bundle["trial"]["trial_id"] != trial_id:
        if indexed is not None:  # the lines moved since the index was written
            _tampered(run, f"{BUNDLE_INDEX}: the line it gives for {trial_id} is another trial's")
        return None
    return bundle, _checked_output(run, bundle)


def find_trials(run: Path, ident: str) -> list[TrialEvidence]:
    """The trials *ident* names, in plan order: a trial id (``t-`` and 24 hex digits)
    names one; anything else is a sample id, naming one trial per target and epoch. A
    merged run's trials are looked up in the shards it holds."""
    folders = plain_trial_folders(run)
    if folders != [run]:
        found = [trial for folder in folders for trial in _find_trials(folder, ident)]
        return sorted(found, key=lambda trial: trial.bundle["trial"]["index"])
    return _find_trials(run, ident)


def plain_trial_folders(run: Path) -> list[Path]:
    """The folders holding *run*'s trials, each refused (exit 4) if any of its files is
    a link, a pipe or a device: reading it might never end (a link to ``/dev/zero``).
    Public for ``export``, which reads the score records before the trials."""
    from assay._messages import say
    from assay.evidence._rundir import read_manifest
    from assay.evidence._shards import trial_folders
    from assay.evidence._verify_folder import unsafe_entries

    folders = trial_folders(run, read_manifest(run))
    for folder in folders:
        for name in unsafe_entries(folder, sealed=False):
            _tampered(folder, f"{name}: {say('verify.unknown_file')}")
    return folders


def _find_trials(run: Path, ident: str) -> list[TrialEvidence]:
    if _TRIAL_ID.fullmatch(ident):
        found = read_trial(run, ident)
        pairs = [found] if found is not None else []
    else:
        pairs = [(b, _checked_output(run, b)) for b in _bundles_of_sample(run, ident)]
    pairs.sort(key=lambda pair: pair[0]["trial"]["index"])
    scores = _scores_of(run, {bundle["trial"]["trial_id"] for bundle, _ in pairs})
    return [
        TrialEvidence(
            bundle,
            output,
            _bound(run, bundle, scores.get(bundle["trial"]["trial_id"])),
            _checked_sample(run, bundle),
            run,
        )
        for bundle, output in pairs
    ]


def every_trial(run: Path) -> Iterator[TrialEvidence]:
    """Every finished trial of *run* in plan order, each part checked as ``find_trials``
    checks it (an export must not carry edited bytes either). The bundles are read in one
    pass and sorted by plan position; each trial's output and sample are read as it is
    yielded, so only the bundles and score records are held at once. A merged run's
    shards are read side by side, in plan order across them."""
    folders = plain_trial_folders(run)
    if folders == [run]:
        return _every_trial(run)
    return heapq.merge(
        *(_every_trial(folder) for folder in folders),
        key=lambda trial: trial.bundle["trial"]["index"],
    )


def _every_trial(run: Path) -> Iterator[TrialEvidence]:
    bundles = [_checked_bundle(run, line) for line in _lines_with(run / BUNDLES, b'"trial_id"')]
    bundles.sort(key=lambda bundle: bundle["trial"]["index"])
    scores = _scores_of(run, {bundle["trial"]["trial_id"] for bundle in bundles})
    for bundle in bundles:
        yield TrialEvidence(
            bundle,
            _checked_output(run, bundle),
            _bound(run, bundle, scores.get(bundle["trial"]["trial_id"])),
            _checked_sample(run, bundle),
            run,
        )


def checked_events(
    run: Path, bundle: dict[str, Any], span: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    """The trial's events the bundle lists, in order, each line checked against the hash
    the bundle gives for its number (one edited line is exit 4, never shown). *span*
    (start, end): the bytes of the log that hold them all, read instead of the whole log
    (a viewer that indexed the log once); an event the span lacks is simply not found."""
    trial = bundle["trial"]["trial_id"]
    listed = {int(n): digest for n, digest in bundle.get("events", [])}
    found: dict[int, list[dict[str, Any]]] = {}  # a line's events by its n (a batch's last)
    for line in _lines_with(run / EVENTS, f'"trial":"{trial}"'.encode(), span):
        record: dict[str, Any] = loads(line)
        n = record.get("n")
        if record.get("trial") != trial or n not in listed or n in found:
            continue  # after the seal (a match), or an earlier try's: not the bundle's
        if hashlib.sha256(line).hexdigest() != listed[n]:
            _tampered(run, f"{EVENTS}: event {n} of {trial} does not match its bundle")
        found[n] = events_in(record)
    return [event for n in sorted(found) for event in found[n]]


def _bundles_of_sample(run: Path, sample_id: str) -> Iterator[dict[str, Any]]:
    # a sample id is a string or an integer in the bundle; the search finds both forms
    quoted = msgspec.json.encode(sample_id)
    for line in _lines_with(run / BUNDLES, b'"sample_id":'):
        if b'"sample_id":' + quoted in line or b'"sample_id":' + sample_id.encode() in line:
            bundle = _checked_bundle(run, line)
            if str(bundle["trial"]["sample_id"]) == sample_id:
                yield bundle


def _scores_of(run: Path, trial_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    needles = [trial_id.encode() for trial_id in trial_ids]
    for line in _lines_with(run / SCORES, b"t-"):
        if any(needle in line for needle in needles):
            record = loads(line)
            if record.get("trial_id") in trial_ids:
                found.setdefault(record["trial_id"], []).append(record)
    return found


def _lines_with(path: Path, needle: bytes, span: tuple[int, int] | None = None) -> Iterator[bytes]:
    """The whole lines of *path* (or of its bytes *span*, starting at a line) that
    contain *needle* (a torn last line is skipped)."""
    try:
        handle = open_evidence(path)
    except FileNotFoundError:
        return
    with handle:
        lines: Iterable[bytes] = handle
        if span is not None:
            handle.seek(span[0])
            lines = io.BytesIO(handle.read(max(0, span[1] - span[0])))
        for line in lines:
            if needle in line and line.endswith(b"\n"):
                yield line.rstrip(b"\n")


def _checked_bundle(run: Path, line: bytes) -> dict[str, Any]:
    try:
        bundle: dict[str, Any] = loads(line)
        intact = bundle_digest(bundle) == bundle["digest"]
    except (ValueError, KeyError, TypeError):
        intact, bundle = False, {}
    if not intact:
        trial = bundle.get("trial", {}).get("trial_id", "?") if bundle else "?"
        _tampered(run, f"{BUNDLES}: the bundle of {trial} does not match its digest")
    return bundle


def _checked_output(run: Path, bundle: dict[str, Any]) -> bytes | None:
    sha = bundle["observation"].get("output")
    return _checked_artifact(run, bundle, "output", sha) if sha else None


def checked_stderr(run: Path, bundle: dict[str, Any]) -> bytes | None:
    """What a program target wrote to stderr during the trial's call (None if nothing),
    checked against the digest its bundle names: ``show`` prints it as it prints output."""
    sha = bundle["artifacts"].get("stderr")
    return _checked_artifact(run, bundle, "stderr", sha) if sha else None


def _checked_sample(run: Path, bundle: dict[str, Any]) -> dict[str, Any] | None:
    sha = bundle["artifacts"].get("sample")
    if not sha:
        return None
    record: dict[str, Any] = loads(_checked_artifact(run, bundle, "sample", sha))
    return record


def _checked_artifact(run: Path, bundle: dict[str, Any], name: str, sha: str) -> bytes:
    trial = bundle["trial"]["trial_id"]
    try:
        data = ArtifactStore(run / ARTIFACTS, write=False).get(sha)
    except OSError:
        _tampered(run, f"{ARTIFACTS}: the {name} {sha} of {trial} is gone")
    if hashlib.sha256(data).hexdigest() != sha:
        _tampered(run, f"{ARTIFACTS}: the {name} {sha} of {trial} changed")
    return data


def _bound(
    run: Path, bundle: dict[str, Any], scores: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    for score in scores or []:
        if score.get("bundle_digest") != bundle["digest"]:
            _tampered(run, f"{SCORES}: the score {score.get('score_id')} names another bundle")
    return scores or []


def _tampered(run: Path, first: str) -> NoReturn:
    raise EvidenceError("evidence.tampered", path=str(run), count=1, first=first)
