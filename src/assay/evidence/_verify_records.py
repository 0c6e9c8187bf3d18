"""The record stores of a run checked by ``verify``: artifacts, bundles and scores.

Each check runs in the verifying process and leaves in the ``Checker`` what a later one
needs: the artifact digests that bundles must find, the bundle digests that scores must
name, each bundle's folded event list and each score line's hash (compared with the
event pass once it has answered).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import msgspec

from assay._digest import sha256_hex
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, SCORES
from assay.evidence._verify_bundles import events_json, read_bundle
from assay.evidence._verify_checker import BundleRefs, Checker, Folds
from assay.evidence._verify_events import fold_key, fold_start
from assay.evidence._verify_packs import PackScan
from assay.evidence._verify_refs import DigestSet, RefList, entries, raw


def check_artifacts(check: Checker) -> None:
    """Artifacts stored as files of their own (runs before packs), each against its name;
    the packs are the pack pass's (``take_packs``)."""
    root = check.path / ARTIFACTS
    if not root.is_dir():
        return
    for folder in sorted(os.scandir(root), key=lambda entry: entry.name):
        if not folder.is_dir():
            continue
        for file in sorted(os.scandir(folder.path), key=lambda entry: entry.name):
            name = file.name
            if name.startswith("."):
                continue
            with open(file.path, "rb") as handle:
                actual = sha256_hex(handle.read())
            if actual != name or folder.name != name[:2]:
                where = f"{ARTIFACTS}/{folder.name}/{name}"
                check.problem(where, "verify.artifact", actual=actual)
            else:
                check.artifacts.add(bytes.fromhex(actual))
            check.result.artifacts += 1


def take_packs(check: Checker, scan: PackScan) -> None:
    """Take in what the pack pass found (here or in a worker): every record hashed
    against the digest in its header."""
    check.artifacts.extend(scan.good)
    scan.good = b""  # taken in: not held twice
    check.result.artifacts += scan.records
    for where, key, params in scan.findings:  # already in pack order
        check.problem(where, key, **params)


def check_bundles(check: Checker, manifest: dict[str, Any]) -> None:
    """Each bundle against its own digest, the plan and the artifacts (the hot loop of
    the main process: a bundle that passes every check builds no string)."""
    plan, bundles, pending, named = check.plan, check.bundles, Folds(), BundleRefs()
    sha256, raw_type = hashlib.sha256, msgspec.Raw
    lines, trials, folds, add_refs = pending.lines, pending.trials, pending.folds, named.add
    for number, line in check.lines(BUNDLES):
        read = read_bundle(line)
        if read is None:
            check.problem(f"{BUNDLES}:{number}", "verify.not_record", kind="bundle")
            continue
        tid, digest, actual, events, refs = read
        if actual != digest or tid not in plan or tid in bundles or _other_part(check, tid):
            _bundle_problems(check, number, read)
        # a digest that matched is kept as read (the string exists already: no unpacking
        # here, no packing again for each score line); any other as ``_digest_key`` has it
        bundles[tid] = digest if actual == digest else _digest_key(digest)
        add_refs(number, tid, refs)
        if type(tid) is str and type(events) is raw_type:  # keyed now, while events walk
            lines.append(number)  # ``Folds.add`` of ``fold_key(tid, events_json(events))``
            trials.append(tid)
            folds += sha256(fold_start(tid) + events).digest()
        elif type(tid) is str:
            pending.add(number, tid, fold_key(tid, events_json(events)))
        else:  # a number, say: not keyed (``check_bundle_events`` says why)
            pending.unkeyed.append(len(pending))
            pending.add(number, tid, sha256(events_json(events)).digest())
    named.done()
    check.pending_folds, check.bundle_refs = pending, named
    check.result.bundles = len(pending)
    complete = manifest.get("status") == "complete"
    planned = len(check.part) if check.shard is not None else len(check.plan)
    if complete and check.result.bundles != planned and not check.sequential:
        check.problem(BUNDLES, "verify.bundle_count", found=check.result.bundles, planned=planned)
    if not check.sequential:  # only the looks check needs the plan again: freed before
        check.plan, check.part = set(), set()  # the event pass's answer is taken in


def _digest_key(digest: Any) -> Any:
    """A bundle digest that did not match its bundle, as kept for the scores to name:
    ``sha256:<hex>`` as its 32 raw bytes, anything else as it was read."""
    if type(digest) is str and digest.startswith("sha256:"):
        packed = raw(digest[7:])
        if packed is not None:
            return packed
    return digest


def _names_bundle(kept: Any, digest: str) -> bool:
    """Whether *digest* (as a score line has it) is the bundle digest kept as *kept*
    (``kept == _digest_key(digest)``, without unpacking *digest*: a string kept is one
    that matched its bundle, or one ``_digest_key`` left as read, equal only to itself)."""
    if type(kept) is str:
        return digest == kept
    if type(kept) is bytes:
        return digest == "sha256:" + kept.hex()
    return kept is not None and kept == _digest_key(digest)


def _other_part(check: Checker, tid: str) -> bool:
    """Whether a shard run holds a bundle of a planned trial outside its part."""
    return check.shard is not None and tid in check.plan and tid not in check.part


def _bundle_problems(check: Checker, number: int, read: tuple[str, Any, str, Any, Any]) -> None:
    tid, digest, actual, *_ = read
    where = f"{BUNDLES}:{number} (trial {tid})"
    if actual != digest:
        check.problem(where, "verify.bundle_digest")
    if tid not in check.plan:
        check.problem(where, "verify.bundle_unplanned")
    if tid in check.bundles:
        check.problem(where, "verify.bundle_twice")
    if _other_part(check, tid) and check.shard is not None:
        check.problem(where, "verify.bundle_other_shard", shard=check.shard.label())


def check_bundle_artifacts(check: Checker) -> None:
    """Each artifact a bundle names must be in the store (checked once the pack pass
    has answered: all of them in one loop, a message only for a bundle that misses one)."""
    named, artifacts = check.bundle_refs, check.artifacts
    absent = set(artifacts.missing(bytes(named.shas)))
    odd = {number: refs for number, _, refs in named.odd}
    held = _held(artifacts, [sha for refs in odd.values() for sha in refs.values()])
    if absent or odd:
        at = 0  # index of the bundle's first digest in ``named.shas``
        for (number, tid, _), kind in zip(check.pending_folds, named.kinds, strict=True):
            names = named.names[kind]
            if number in odd:
                check.line = number
                refs = odd[number]
                gone = {name for name, sha in refs.items() if raw(sha) not in held}
                _missing_artifacts(check, number, tid, refs, gone)
            elif absent.intersection(range(at, at + len(names))):
                shas = named.shas[32 * at : 32 * (at + len(names))]
                refs = {name: shas[32 * i : 32 * i + 32].hex() for i, name in enumerate(names)}
                gone = {name for i, name in enumerate(names) if at + i in absent}
                check.line = number
                _missing_artifacts(check, number, tid, refs, gone)
            at += len(names)
    check.bundle_refs = BundleRefs()


def _held(artifacts: DigestSet, shas: list[Any]) -> set[bytes]:
    """Which of *shas* (any values: only sha256 digests can be held) are in *artifacts*,
    as raw bytes: looked up at once, however many bundles name something odd."""
    asked = [data for data in map(raw, shas) if data is not None]
    absent = set(artifacts.missing(b"".join(asked)))
    return {data for index, data in enumerate(asked) if index not in absent}


def _missing_artifacts(
    check: Checker, number: int, tid: str, refs: dict[str, str], gone: set[str]
) -> None:
    """Name each artifact of *refs* that is *gone* (not in the store)."""
    where = f"{BUNDLES}:{number} (trial {tid})"
    for name, sha in sorted(refs.items()):
        if name in gone:
            path = f"sha256 {sha}"
            check.problem(where, "verify.bundle_artifact", rank=2, name=name, path=path)


def check_event_artifacts(check: Checker, refs: RefList) -> None:
    """Each artifact a model or tool event names must be in the store (the artifacts
    pass has collected what is there, each checked against its name)."""
    absent = set(check.artifacts.missing(refs.shas))
    if not refs.odd and not absent:
        return  # every reference found (the usual run): no entry needs a message
    packed = 0  # index of the next packed entry (the ones ``missing`` looked up)
    for number, field, sha in entries(refs):
        if type(sha) is bytes:  # packed; any other is kept as read, and not in the store
            packed += 1
            if packed - 1 not in absent:
                continue
        check.line = number
        where = f"{EVENTS}:{number}"
        shown = sha.hex() if isinstance(sha, bytes) else sha
        check.problem(where, "verify.event_artifact", field=field, sha=shown[:16])


def check_bundle_events(check: Checker) -> None:
    """Each bundle's event list against the events its trial logged (after the event
    pass, which may have run in another process)."""
    folds = check.pending_folds
    for index in folds.unkeyed[:1]:  # the AttributeError keying it raises: unreadable
        fold_start(folds.trials[index])
    for index in check.trial_events.missing(bytes(folds.folds)):  # in bundle order
        number = check.line = folds.lines[index]
        where = f"{BUNDLES}:{number} (trial {folds.trials[index]})"
        check.problem(where, "verify.bundle_events", rank=1, events=EVENTS)
    check.pending_folds = Folds()


class _ScoreHead(msgspec.Struct):
    """What verify reads of a score line: the trial it scores and the bundle it judged."""

    trial_id: str
    bundle_digest: str


_score_head = msgspec.json.Decoder(_ScoreHead).decode


def read_scores(check: Checker) -> None:
    """Score lines against their bundles, and each line's hash kept for the event pass
    (this runs while the worker may still be walking the events)."""
    bundles, numbers, hashes = check.bundles, check.score_lines, check.score_digests
    sha256 = hashlib.sha256
    for number, line in check.lines(SCORES):
        try:
            score = _score_head(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            check.problem(f"{SCORES}:{number}", "verify.not_record", kind="score")
            continue
        numbers.append(number)
        hashes += sha256(line).digest()
        kept, digest = bundles.get(score.trial_id), score.bundle_digest
        if (type(kept) is not str or kept != digest) and not _names_bundle(kept, digest):
            where = f"{SCORES}:{number}"
            check.problem(where, "verify.score_bundle", rank=1, trial=score.trial_id)
    check.result.scores = len(numbers)
    check.bundles = {}  # compared with every score: freed now, not in verify's last steps


def check_score_binding(check: Checker) -> None:
    """Each score line must be one a ``match`` event binds (known once the events are)."""
    for index in check.score_hashes.missing(bytes(check.score_digests)):  # in file order
        number = check.line = check.score_lines[index]
        check.problem(f"{SCORES}:{number}", "verify.score_unbound")
