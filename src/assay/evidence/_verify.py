"""Re-derive every digest in a run directory and name anything that changed.

``verify_run`` reads the evidence the way an auditor would, trusting nothing it has not
recomputed: the spec and plan against the manifest, trial ids against the spec, the event
chain link by link, each artifact against its name, each bundle against its digest and
against the events and artifacts it lists, and each score against its bundle.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from assay._digest import sha256_hex
from assay._messages import say
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, MANIFEST, PLAN, SCORES, SPEC
from assay.evidence._pack import pack_names
from assay.evidence._rundir import read_manifest
from assay.evidence._verify_bundles import fold_events, read_bundle
from assay.evidence._verify_events import (
    EventScan,
    Finding,
    file_digest,
    finish_scan,
    line_chunks,
    start_scan,
    stop_scan,
)
from assay.evidence._verify_pack import Mismatch, hash_pack
from assay.plan import trial_id
from assay.spec import EvalSpec

MAX_LISTED = 200


class VerifyResult(msgspec.Struct):
    """What verification found: problems (empty when the run verifies) and counts."""

    problems: list[str]
    trials: int = 0
    events: int = 0
    artifacts: int = 0
    bundles: int = 0
    scores: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing changed."""
        return not self.problems


PARALLEL_BYTES = 16 << 20  # an events.jsonl this large is walked in a worker process
_ORDER = (SPEC, MANIFEST, PLAN, EVENTS, ARTIFACTS, BUNDLES, SCORES)  # how findings list


class _Checker:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.result = VerifyResult(problems=[])
        self.plan: set[str] = set()  # the planned trial ids
        self.trial_events: dict[str, bytes] = {}
        self.artifacts: set[str] = set()
        self.bundles: dict[str, str] = {}
        self.pending_folds: list[tuple[int, str, bytes]] = []  # bundle line, trial, fold
        self.score_hashes: set[Any] = set()
        self.score_lines: list[tuple[int, str]] = []  # line number, sha256 of the line
        self.run_tail: tuple[str, Any] = ("", {})
        self.found: dict[str, list[tuple[int, int, int, str]]] = {}
        self.section, self.line = SPEC, 0
        self.manifest_files: set[str] = set()  # files whose whole digests the manifest lists
        self.file_digests: dict[str, str] = {}  # of those, the ones hashed here

    def start(self, section: str) -> None:
        """Findings from now on are about *section* (they list in file order at the end,
        whatever order the sections were checked in)."""
        self.section, self.line = section, 0

    def problem(self, where: str, key: str, rank: int = 0, **params: object) -> None:
        """Note a finding about *where* (a file, maybe with a line), in the current language."""
        listed = self.found.setdefault(self.section, [])
        if len(listed) < MAX_LISTED:
            text = f"{where}: {say(key, **params)}"
            listed.append((self.line, rank, len(listed), text))

    def listed(self) -> list[str]:
        """Every finding: sections in file order, each by line (and by check within one)."""
        ordered = [text for name in _ORDER for *_, text in sorted(self.found.get(name, []))]
        return ordered[:MAX_LISTED]

    def lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of the file *name*; a file the manifest lists is hashed
        whole on the way (kept only if read to its end)."""
        findings: list[Finding] = []
        whole = hashlib.sha256() if name in self.manifest_files else None
        number = 0
        for chunk in line_chunks(self.path / name, name, findings, whole):
            for line in chunk:
                number += 1
                self.line = number
                for where, key, params in findings:
                    self.problem(where, key, **params)
                findings.clear()
                yield number, line
        for where, key, params in findings:  # a missing file
            self.problem(where, key, **params)
        if whole is not None and (self.path / name).is_file():
            self.file_digests[name] = "sha256:" + whole.hexdigest()


_READ_HERE = (PLAN, BUNDLES, SCORES)  # files this process reads line by line anyway


def verify_run(path: Path) -> VerifyResult:
    """Verify the run at *path*; raises EvidenceError only if it is not a run at all.

    A large run's event chain is walked in a worker process while this one checks the
    plan, the artifacts and the bundles (the two passes share nothing until bundles are
    compared with the events they list), so verify uses both cores.
    """
    manifest = read_manifest(path)
    check = _Checker(path)
    check.manifest_files = set(_listed_files(manifest))
    worker_files = sorted(check.manifest_files - set(_READ_HERE))
    worker = start_scan(path, PARALLEL_BYTES, worker_files)
    try:
        check.start(SPEC)
        spec = _guarded(check, SPEC, lambda: _check_spec(check, manifest))
        if spec is not None:
            check.start(PLAN)
            _guarded(check, PLAN, lambda: _check_plan(check, spec, manifest))
        check.start(ARTIFACTS)
        _guarded(check, ARTIFACTS, lambda: _check_artifacts(check))
        check.start(BUNDLES)
        _guarded(check, BUNDLES, lambda: _check_bundles(check, manifest))
        check.start(SCORES)
        _guarded(check, SCORES, lambda: _read_scores(check))
        scan = finish_scan(path, worker, worker_files)
        worker = None
        check.start(MANIFEST)
        _guarded(check, MANIFEST, lambda: _check_files(check, manifest, scan))
        check.start(EVENTS)
        _guarded(check, EVENTS, lambda: _check_events(check, manifest, scan))
        check.start(BUNDLES)
        _guarded(check, BUNDLES, lambda: _check_bundle_events(check))
        check.start(SCORES)
        _guarded(check, SCORES, lambda: _check_score_binding(check))
    finally:
        stop_scan(worker)  # interrupted: the worker's answer is not wanted
    check.result.problems = check.listed()
    return check.result


T = TypeVar("T")


def _guarded(check: _Checker, name: str, step: Callable[[], T]) -> T | None:
    """Run one check; evidence so damaged that it cannot be read (a record of the wrong
    shape, a folder where a file belongs) is a finding about *name*, not a crash."""
    try:
        return step()
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        check.problem(name, "verify.unreadable", reason=f"{type(exc).__name__}: {exc}"[:200])
        return None


def _check_spec(check: _Checker, manifest: dict[str, Any]) -> EvalSpec | None:
    try:
        data = (check.path / SPEC).read_bytes()
    except FileNotFoundError:
        check.problem(SPEC, "verify.missing")
        return None
    digest = "sha256:" + sha256_hex(data)
    if digest != manifest.get("spec_digest"):
        check.problem(SPEC, "verify.spec_digest", digest=digest)
    try:
        return msgspec.json.decode(data, type=EvalSpec)
    except msgspec.MsgspecError as exc:
        check.problem(SPEC, "verify.spec_invalid", reason=exc)
        return None


def _listed_files(manifest: dict[str, Any]) -> list[str]:
    """The files whose whole digests the manifest lists."""
    files = manifest.get("files", {})
    return sorted(files) if isinstance(files, dict) else []


def _check_files(check: _Checker, manifest: dict[str, Any], scan: EventScan) -> None:
    """Whole-file digests catch edits the record-level checks cannot (e.g. a report).
    Each was taken by whichever pass read the file; one neither read is hashed now."""
    for name, expected in sorted(manifest.get("files", {}).items()):
        if name in check.file_digests:
            digest: str | None = check.file_digests[name]
        elif name in scan.file_digests:
            digest = scan.file_digests[name]
        else:  # a file this process stopped reading early (or never read)
            digest = file_digest(check.path / name)
        if digest is None:
            check.problem(name, "verify.missing")
        elif digest != expected:
            check.problem(name, "verify.file_digest", digest=digest, expected=expected)


class _SampleOf(msgspec.Struct):
    """Only the sample id of a plan line (the rest is compared as bytes)."""

    sample_id: Any


class _PlanLine(msgspec.Struct):
    """A plan line as the planner writes it: these fields, in this order."""

    index: int
    trial_id: str
    sample_index: int
    sample_id: str
    target_id: str
    repetition: int


_plan_sample = msgspec.json.Decoder(_SampleOf).decode
_plan_line = msgspec.json.Encoder().encode


def _check_plan(check: _Checker, spec: EvalSpec, manifest: dict[str, Any]) -> None:
    """Each line must be exactly the trial the spec plans at that position."""
    targets, reps = [t.id for t in spec.targets], spec.repetitions
    per_sample = len(targets) * reps
    sample_ids: set[str] = set()
    current = ""
    for number, line in check.lines(PLAN):
        index = number - 1
        try:
            sample_id = _plan_sample(line).sample_id
        except (msgspec.DecodeError, msgspec.ValidationError):
            check.problem(f"{PLAN}:{number}", "verify.not_record", kind="plan")
            continue
        if index % per_sample == 0:  # the first trial of a sample names it for the rest
            if not isinstance(sample_id, str) or sample_id in sample_ids:
                check.problem(f"{PLAN}:{number}", "verify.not_record", kind="plan")
            current = str(sample_id)
            sample_ids.add(current)
        target_id, repetition = targets[(index // reps) % len(targets)], index % reps + 1
        tid = trial_id(spec.evaluation, target_id, str(sample_id), repetition)
        expected = _plan_line(
            _PlanLine(index, tid, index // per_sample, current, target_id, repetition)
        )
        if line != expected:
            check.problem(f"{PLAN}:{number}", "verify.plan_line", trial=tid)
        check.plan.add(tid)
    planned = spec.dataset.samples * per_sample
    check.result.trials = len(check.plan)
    if len(check.plan) != planned or len(sample_ids) != spec.dataset.samples:
        check.problem(PLAN, "verify.plan_count", found=len(check.plan), expected=planned)
    if manifest.get("planned") != planned:
        check.problem(MANIFEST, "verify.manifest_field", field="planned")
    if manifest.get("evaluation") != spec.evaluation:
        check.problem(MANIFEST, "verify.manifest_field", field="evaluation")


def _check_events(check: _Checker, manifest: dict[str, Any], scan: EventScan) -> None:
    """Take in what the event pass found (here or in a worker) and check the manifest's
    binding to the chain: its last run-level event, event count and head."""
    for where, key, params in scan.findings:  # already in file order
        check.problem(where, key, **params)
    check.trial_events, check.score_hashes = scan.folds, scan.score_hashes
    check.run_tail = scan.run_tail
    if not scan.readable:
        return
    check.result.events = scan.events
    _check_manifest_binding(check, manifest)
    if manifest.get("status") == "running":
        return  # a crashed run's manifest predates its last events; resume seals it
    if scan.head != manifest.get("events_head") or scan.events != manifest.get("events"):
        check.problem(
            EVENTS,
            "verify.event_tail",
            count=scan.events,
            head=scan.head[:16],
            expected_count=manifest.get("events"),
            expected_head=str(manifest.get("events_head"))[:16],
        )


def _check_manifest_binding(check: _Checker, manifest: dict[str, Any]) -> None:
    """A finished or interrupted run's manifest must repeat its last run-level event."""
    closing = {"complete": "run_finished", "interrupted": "run_interrupted"}
    status = manifest.get("status")
    kind, data = check.run_tail
    if status == "running":
        if kind in closing.values():
            check.problem(MANIFEST, "verify.manifest_field", field="status")
        return
    if status not in closing or kind != closing[status]:
        check.problem(MANIFEST, "verify.manifest_field", field="status")
        return
    unbound = {"schema", "events", "events_head"}
    for field in sorted((set(manifest) | set(data)) - unbound):
        if manifest.get(field) != data.get(field):
            check.problem(MANIFEST, "verify.manifest_field", field=field)


def _check_artifacts(check: _Checker) -> None:
    root = check.path / ARTIFACTS
    if not root.is_dir():
        return
    for name in pack_names(root):
        _check_pack(check, root / name)
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
                check.artifacts.add(actual)
            check.result.artifacts += 1


def _check_pack(check: _Checker, path: Path) -> None:
    """Hash every record of a pack against the digest in its header."""
    bad: list[Mismatch] = []
    records, broken = hash_pack(path, check.artifacts, bad)
    name = path.name
    check.result.artifacts += records
    for offset, sha, actual in bad:
        check.problem(f"{ARTIFACTS}/{name}@{offset} ({sha})", "verify.artifact", actual=actual)
    if broken is not None:
        check.problem(f"{ARTIFACTS}/{name}@{broken}", "verify.not_record", kind="artifact")


def _check_bundles(check: _Checker, manifest: dict[str, Any]) -> None:
    """Each bundle against its own digest, the plan and the artifacts (the hot loop of
    the main process: a bundle that passes every check builds no string)."""
    plan, bundles, artifacts, pending = check.plan, check.bundles, check.artifacts, []
    for number, line in check.lines(BUNDLES):
        read = read_bundle(line)
        if read is None:
            check.problem(f"{BUNDLES}:{number}", "verify.not_record", kind="bundle")
            continue
        tid, digest, actual, events, refs = read
        if actual != digest or tid not in plan or tid in bundles:
            _bundle_problems(check, number, read)
        bundles[tid] = digest
        for sha in refs.values():
            if sha not in artifacts:
                _missing_artifacts(check, number, tid, refs)
                break
        pending.append((number, tid, fold_events(events)))
    check.pending_folds = pending
    check.result.bundles = len(pending)
    if manifest.get("status") == "complete" and check.result.bundles != len(check.plan):
        check.problem(
            BUNDLES, "verify.bundle_count", found=check.result.bundles, planned=len(check.plan)
        )


def _bundle_problems(check: _Checker, number: int, read: tuple[str, Any, str, Any, Any]) -> None:
    tid, digest, actual, *_ = read
    where = f"{BUNDLES}:{number} (trial {tid})"
    if actual != digest:
        check.problem(where, "verify.bundle_digest")
    if tid not in check.plan:
        check.problem(where, "verify.bundle_unplanned")
    if tid in check.bundles:
        check.problem(where, "verify.bundle_twice")


def _missing_artifacts(check: _Checker, number: int, tid: str, refs: dict[str, str]) -> None:
    where = f"{BUNDLES}:{number} (trial {tid})"
    for name, sha in sorted(refs.items()):
        if sha not in check.artifacts:
            path = f"sha256 {sha}"
            check.problem(where, "verify.bundle_artifact", rank=2, name=name, path=path)


def _check_bundle_events(check: _Checker) -> None:
    """Each bundle's event list against the events its trial logged (after the event
    pass, which may have run in another process)."""
    logged = check.trial_events
    for number, tid, fold in check.pending_folds:
        expected = logged.get(tid)
        if expected != fold:
            check.line = number
            where = f"{BUNDLES}:{number} (trial {tid})"
            check.problem(where, "verify.bundle_events", rank=1, events=EVENTS)
    check.pending_folds = []


class _ScoreHead(msgspec.Struct):
    """What verify reads of a score line: the trial it scores and the bundle it judged."""

    trial_id: str
    bundle_digest: str


_score_head = msgspec.json.Decoder(_ScoreHead).decode


def _read_scores(check: _Checker) -> None:
    """Score lines against their bundles, and each line's hash kept for the event pass
    (this runs while the worker may still be walking the events)."""
    bundles, hashes, sha256 = check.bundles, check.score_lines, hashlib.sha256
    for number, line in check.lines(SCORES):
        try:
            score = _score_head(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            check.problem(f"{SCORES}:{number}", "verify.not_record", kind="score")
            continue
        hashes.append((number, sha256(line).hexdigest()))
        if bundles.get(score.trial_id) != score.bundle_digest:
            where = f"{SCORES}:{number}"
            check.problem(where, "verify.score_bundle", rank=1, trial=score.trial_id)
    check.result.scores = len(hashes)


def _check_score_binding(check: _Checker) -> None:
    """Each score line must be one a ``match`` event binds (known once the events are)."""
    bound = check.score_hashes
    for number, digest in check.score_lines:
        if digest not in bound:
            check.line = number
            check.problem(f"{SCORES}:{number}", "verify.score_unbound")
