"""Re-derive every digest in a run directory and name anything that changed.

``verify_run`` reads the evidence the way an auditor would, trusting nothing it has not
recomputed: the spec and plan against the manifest, trial ids against the spec, the event
chain link by link, each artifact against its name, each bundle against its digest and
against the events and artifacts it lists, and each score against its bundle. The record
stores' checks are in ``_verify_records``, the event pass in ``_verify_events`` (which may
run in a second process), the findings' bookkeeping in ``_verify_checker``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from assay._digest import sha256_hex
from assay._messages import say
from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, MANIFEST, PLAN, SCORES, SPEC
from assay.evidence._rundir import read_manifest
from assay.evidence._verify_checker import Checker, VerifyResult
from assay.evidence._verify_events import EventScan, finish_scan, start_scan, stop_scan
from assay.evidence._verify_folder import check_folder, check_manifest_bytes, unsafe_entries
from assay.evidence._verify_looks import check_looks
from assay.evidence._verify_merged import is_merged, verify_merged
from assay.evidence._verify_pack import file_digest
from assay.evidence._verify_packs import finish_packs, packs_apart, start_pack_worker
from assay.evidence._verify_records import (
    check_artifacts,
    check_bundle_artifacts,
    check_bundle_events,
    check_bundles,
    check_event_artifacts,
    check_score_binding,
    read_scores,
    take_packs,
)
from assay.evidence._verify_refs import DigestSet, RefList
from assay.plan import Shard, sample_order, trial_id
from assay.spec import EvalSpec

PARALLEL_BYTES = 16 << 20  # an events.jsonl this large is walked in a worker process
PACK_BYTES = 16 << 20  # packs this large (logical bytes, all together) are hashed in another
_READ_HERE = (PLAN, BUNDLES, SCORES)  # files this process reads line by line anyway


def verify_run(path: Path) -> VerifyResult:
    """Verify the run at *path*; raises EvidenceError only if it is not a run at all.

    A large run's event chain is walked in a worker process while this one checks the
    plan, the artifacts and the bundles (the two passes share nothing until bundles are
    compared with the events they list), so verify uses both cores.
    """
    manifest = read_manifest(path)
    if is_merged(manifest):  # no trials of its own: the shards it holds are checked
        return verify_merged(path, manifest, verify_run)
    check = Checker(path)
    check.result.status = str(manifest.get("status"))
    planned = manifest.get("planned")
    check.result.planned = planned if isinstance(planned, int) else 0
    check.manifest_files = set(_listed_files(manifest))
    check.shard = shard_in(manifest)
    trials = (manifest.get("shard") or {}).get("trials") if check.shard else None
    if isinstance(trials, int):  # an unfinished shard: finished N of its own part's M
        check.result.planned = trials
    sealed = manifest.get("status") == "complete"
    if unsafe_entries(path, sealed=sealed):  # a link or a pipe: named, and nothing read
        check_folder(check, sealed=sealed)
        check.result.problems = check.listed()
        return check.result
    others = sorted(check.manifest_files - set(_READ_HERE))  # hashed by the pack pass
    apart = packs_apart(path, PACK_BYTES)  # if it has a process (else by the event pass)
    pack_files, event_files = (others, []) if apart else ([], others)
    worker = start_scan(path, PARALLEL_BYTES, event_files)
    packer = start_pack_worker(path, pack_files) if apart else None
    try:
        check.start(SPEC)
        spec = _guarded(check, SPEC, lambda: _check_spec(check, manifest))
        if spec is not None:
            check.sequential = spec.gate.stopping is not None
            check.start(PLAN)
            _guarded(check, PLAN, lambda: _check_plan(check, spec, manifest))
        check.start(BUNDLES)
        _guarded(check, BUNDLES, lambda: check_bundles(check, manifest))
        check.start(SCORES)
        _guarded(check, SCORES, lambda: read_scores(check))
        packs = finish_packs(path, packer, pack_files)
        packer = None
        if packs.fallback:
            check.result.notes.append(say("verify.packs_redone", reason=packs.fallback))
        check.start(ARTIFACTS)
        _guarded(check, ARTIFACTS, lambda: take_packs(check, packs))
        _guarded(check, ARTIFACTS, lambda: check_artifacts(check))
        check.start(BUNDLES)
        _guarded(check, BUNDLES, lambda: check_bundle_artifacts(check))
        scan = finish_scan(path, worker, event_files)
        scan.file_digests.update(packs.file_digests)
        worker = None
        if scan.fallback:
            check.result.notes.append(say("verify.redone", reason=scan.fallback))
        check.start(EVENTS)
        _guarded(check, EVENTS, lambda: check_event_artifacts(check, scan.refs))
        check.artifacts, scan.refs = DigestSet(), RefList()  # looked up: freed before the
        check.start(MANIFEST)  # event pass's answer is taken in
        _guarded(check, MANIFEST, lambda: _check_files(check, manifest, scan))
        _guarded(check, MANIFEST, lambda: check_manifest_bytes(check))
        _guarded(check, MANIFEST, lambda: check_folder(check, sealed=sealed))
        check.start(EVENTS)
        _guarded(check, EVENTS, lambda: _check_events(check, manifest, scan))
        check.start(BUNDLES)
        _guarded(check, BUNDLES, lambda: check_bundle_events(check))
        check.start(SCORES)
        _guarded(check, SCORES, lambda: check_score_binding(check))
        if spec is not None and check.sequential:
            check.start(EVENTS)
            _guarded(check, EVENTS, lambda: check_looks(check, spec, manifest, scan))
    finally:
        stop_scan(worker)  # interrupted: the workers' answers are not wanted
        stop_scan(packer)
    check.result.problems = check.listed()
    return check.result


T = TypeVar("T")


def _guarded(check: Checker, name: str, step: Callable[[], T]) -> T | None:
    """Run one check; evidence so damaged that it cannot be read (a record of the wrong
    shape, a folder where a file belongs) is a finding about *name*, not a crash."""
    try:
        return step()
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        check.problem(name, "verify.unreadable", reason=f"{type(exc).__name__}: {exc}"[:200])
        return None


def _check_spec(check: Checker, manifest: dict[str, Any]) -> EvalSpec | None:
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


def _check_files(check: Checker, manifest: dict[str, Any], scan: EventScan) -> None:
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


def _check_plan(check: Checker, spec: EvalSpec, manifest: dict[str, Any]) -> None:
    """Each line must be exactly the trial the spec plans at that position."""
    targets, reps = [t.id for t in spec.targets], spec.repetitions
    per_sample = len(targets) * reps
    order = sample_order(spec, spec.dataset.samples)
    sample_ids: set[str] = set()
    current = ""
    evaluation, count, ordered = spec.evaluation, len(targets), len(order)
    shard, plan = check.shard, check.plan  # bound once: the loop runs per trial
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
        target_id, repetition = targets[(index // reps) % count], index % reps + 1
        tid = trial_id(evaluation, target_id, str(sample_id), repetition)
        position = index // per_sample
        sample_index = order[position] if position < ordered else position
        expected = _plan_line(_PlanLine(index, tid, sample_index, current, target_id, repetition))
        if line != expected:
            check.problem(f"{PLAN}:{number}", "verify.plan_line", trial=tid)
        plan.add(tid)
        if shard is not None and shard.holds(index, per_sample):
            check.part.add(tid)
    planned = spec.dataset.samples * per_sample
    check.result.trials = len(check.plan)
    if len(check.plan) != planned or len(sample_ids) != spec.dataset.samples:
        check.problem(PLAN, "verify.plan_count", found=len(check.plan), expected=planned)
    if manifest.get("planned") != planned:
        check.problem(MANIFEST, "verify.manifest_field", field="planned")
    if manifest.get("evaluation") != spec.evaluation:
        check.problem(MANIFEST, "verify.manifest_field", field="evaluation")


def shard_in(manifest: dict[str, Any]) -> Shard | None:
    """The part of the plan a shard run's manifest says it holds (``None``: a whole
    run, or a ``shard`` field of the wrong shape, which the chain binding flags)."""
    shard = manifest.get("shard")
    if not isinstance(shard, dict):
        return None
    index, count = shard.get("index"), shard.get("count")
    if isinstance(index, int) and isinstance(count, int) and 1 <= index <= count:
        return Shard(index, count)
    return None


def _check_events(check: Checker, manifest: dict[str, Any], scan: EventScan) -> None:
    """Take in what the event pass found (here or in a worker) and check the manifest's
    binding to the chain: its last run-level event, event count and head."""
    for where, key, params in scan.findings:  # already in file order
        check.problem(where, key, **params)
    check.trial_events = DigestSet.of(scan.folds)
    check.score_hashes = DigestSet.of(scan.score_hashes)
    scan.folds = scan.score_hashes = b""  # taken in: not held twice
    check.run_tail = scan.run_tail
    if not scan.readable:
        return
    check.result.events = scan.events + scan.batched  # events, a batch line's counted inside
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


def _check_manifest_binding(check: Checker, manifest: dict[str, Any]) -> None:
    """A finished or interrupted run's manifest must repeat its last run-level event."""
    closing = {"complete": "run_finished", "interrupted": "run_interrupted"}
    status = manifest.get("status")
    kind, data = check.run_tail
    if status == "running":
        return  # a closing event here too: the seal was cut short after it; resume seals again
    if status not in closing or kind != closing[status]:
        check.problem(MANIFEST, "verify.manifest_field", field="status")
        return
    unbound = {"schema", "events", "events_head"}
    for field in sorted((set(manifest) | set(data)) - unbound):
        if manifest.get(field) != data.get(field):
            check.problem(MANIFEST, "verify.manifest_field", field=field)
