"""``verify`` of a merged run (``assay merge``): its own few files, then every shard it
holds, through it.

A merged run holds no trial evidence of its own: a copy of each shard under
``shards/K`` (each a whole run folder, verified as one), the spec, the plan, the
reports, and a short event chain of its own (``run_merged``, naming every shard with
the SHA-256 of its ``manifest.json`` and its event-chain head; ``metrics``; ``gate``;
``run_finished`` repeating the manifest). Editing a shard's evidence breaks the shard's
own verify; replacing a shard whole (a re-run, say) changes its manifest's digest, which
the merged run's chain pins.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from assay._digest import canonical_json, file_sha256, loads, sha256_hex
from assay._messages import say
from assay.errors import EvidenceError
from assay.evidence._framed import SUFFIX, read_evidence
from assay.evidence._layout import (
    ATTESTATION,
    EVENTS,
    LOCK,
    MANIFEST,
    PLAN,
    REPORTS,
    SPEC,
)
from assay.evidence._log import GENESIS
from assay.evidence._rundir import read_manifest
from assay.evidence._shards import SHARDS, shard_set_problems
from assay.evidence._verify_checker import VerifyResult
from assay.evidence._verify_pack import file_digest

KNOWN = frozenset(
    {MANIFEST, SPEC, PLAN, PLAN + SUFFIX, EVENTS, SHARDS, LOCK, ATTESTATION, *REPORTS}
)
"""Every name at the top of a merged run folder."""

UNBOUND = ("schema", "events", "events_head")
"""Manifest fields its closing event cannot repeat (they are about that event)."""


def is_merged(manifest: dict[str, Any]) -> bool:
    """Whether *manifest* is a merged run's (it pins shards instead of holding trials)."""
    return "shards" in manifest


class _Found:
    """The findings of one merged-run verify, as ``where: what`` lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, where: str, key: str, **params: object) -> None:
        self.lines.append(f"{where}: {say(key, **params)}")


def verify_merged(
    path: Path, manifest: dict[str, Any], verify: Callable[[Path], VerifyResult]
) -> VerifyResult:
    """Verify the merged run at *path*; *verify* checks each shard (``verify_run``)."""
    found = _Found()
    result = VerifyResult(problems=[], status=str(manifest.get("status")))
    planned = manifest.get("planned")
    result.planned = planned if isinstance(planned, int) else 0
    _guarded(found, MANIFEST, lambda: _check_own_files(path, manifest, found))
    result.events = _guarded(found, EVENTS, lambda: _check_chain(path, manifest, found)) or 0
    pinned: list[tuple[str, dict[str, Any]]] = []
    pins = manifest.get("shards")
    for pin in pins if isinstance(pins, list) else []:
        shard = _guarded(
            found, SHARDS, partial(_check_shard, path, manifest, pin, found, verify, result)
        )
        if shard is not None:
            pinned.append(shard)
    if pinned:
        for key, params in shard_set_problems(pinned):
            found.add(SHARDS, key, **params)
    else:
        found.add(SHARDS, "verify.missing")
    if result.status == "complete" and result.bundles != result.planned:
        found.add(SHARDS, "verify.bundle_count", found=result.bundles, planned=result.planned)
    result.trials = result.planned
    result.problems = found.lines
    return result


T = TypeVar("T")


def _guarded(found: _Found, name: str, step: Callable[[], T]) -> T | None:
    """Run one check; a file so damaged it cannot be read (not JSON, a field of the wrong
    shape) is a finding about *name*, not a crash."""
    try:
        return step()
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        found.add(name, "verify.unreadable", reason=f"{type(exc).__name__}: {exc}"[:200])
        return None


def _check_own_files(path: Path, manifest: dict[str, Any], found: _Found) -> None:
    """The spec against its digest, each listed file against its digest, the manifest's
    canonical bytes, and nothing in the folder that a merge does not write."""
    spec = path / SPEC
    if not spec.is_file():
        found.add(SPEC, "verify.missing")
    elif "sha256:" + file_sha256(spec) != manifest.get("spec_digest"):
        found.add(SPEC, "verify.spec_digest", digest="sha256:" + file_sha256(spec))
    for name, expected in sorted((manifest.get("files") or {}).items()):
        digest = file_digest(path / name)  # of its logical bytes: plain, or compacted
        if digest is None:
            found.add(name, "verify.missing")
            continue
        if digest != expected:
            found.add(name, "verify.file_digest", digest=digest, expected=expected)
    data = (path / MANIFEST).read_bytes()
    if canonical_json(loads(data)) != data:
        found.add(MANIFEST, "verify.not_canonical")
    for entry in sorted(p.name for p in path.iterdir()):
        if entry not in KNOWN:
            found.add(entry, "verify.unknown_file")


def _check_chain(path: Path, manifest: dict[str, Any], found: _Found) -> int:
    """The merged run's own chain: linked, opening with the shards it pins, closing with
    the manifest's fields, its count and head the manifest's. Returns its length."""
    try:
        lines = read_evidence(path / EVENTS).splitlines()
    except FileNotFoundError:
        found.add(EVENTS, "verify.missing")
        return 0
    head = GENESIS
    events = []
    for number, line in enumerate(lines, 1):
        event = loads(line)
        if event.get("prev") != head or event.get("seq") != number - 1:
            found.add(f"{EVENTS}:{number}", "verify.chain", previous=number - 1)
        head = sha256_hex(line)
        events.append(event)
    if head != manifest.get("events_head") or len(lines) != manifest.get("events"):
        found.add(
            EVENTS,
            "verify.event_tail",
            count=len(lines),
            head=head[:16],
            expected_count=manifest.get("events"),
            expected_head=str(manifest.get("events_head"))[:16],
        )
    first = events[0] if events else {}
    if first.get("type") != "run_merged" or first.get("data", {}).get("shards") != manifest.get(
        "shards"
    ):
        found.add(MANIFEST, "verify.manifest_field", field="shards")
    last = events[-1] if events else {}
    fields = {k: v for k, v in manifest.items() if k not in UNBOUND}
    closing = {"complete": "run_finished"}.get(str(manifest.get("status")))
    if last.get("type") != closing or last.get("data") != fields:
        for field in sorted(set(fields) | set(last.get("data") or {})):
            if fields.get(field) != (last.get("data") or {}).get(field):
                found.add(MANIFEST, "verify.manifest_field", field=field)
        if last.get("type") != closing:
            found.add(MANIFEST, "verify.manifest_field", field="status")
    return len(lines)


def _check_shard(
    path: Path,
    manifest: dict[str, Any],
    pin: dict[str, Any],
    found: _Found,
    verify: Callable[[Path], VerifyResult],
    result: VerifyResult,
) -> tuple[str, dict[str, Any]] | None:
    """One pinned shard: inside ``shards/``, its manifest the pinned one, its chain head
    the pinned one, its plan the merged run's, and its whole evidence verifying. Its
    counts add to *result*; returns (name, manifest) for the coverage check."""
    relative = PurePosixPath(str(pin.get("path", "")))
    if relative.parts[:1] != (SHARDS,) or len(relative.parts) != 2 or ".." in relative.parts:
        found.add(str(relative), "verify.shard_path", folder=SHARDS)
        return None
    name = str(relative)
    folder = path / relative
    try:
        shard = read_manifest(folder)
    except EvidenceError:
        found.add(name, "verify.missing")
        return None
    if "sha256:" + file_sha256(folder / MANIFEST) != pin.get("manifest"):
        found.add(name, "verify.shard_pin", what=MANIFEST)
    if shard.get("events_head") != pin.get("events_head"):
        found.add(name, "verify.shard_pin", what="events_head")
    if shard.get("files", {}).get(PLAN) != (manifest.get("files") or {}).get(PLAN):
        found.add(name, "verify.shard_pin", what=PLAN)
    checked = verify(folder)
    for problem in checked.problems:
        found.add(name, "verify.shard_problem", problem=problem)
    result.bundles += checked.bundles
    result.scores += checked.scores
    result.events += checked.events
    result.artifacts += checked.artifacts
    return name, shard
