"""The run directory: where a run's evidence lives, and the one writer allowed in it.

    RUN/
      manifest.json   status, digests of the files below, the event chain's last hash
      spec.json       the frozen spec (canonical JSON; its SHA-256 is the spec digest)
      plan.jsonl      one planned trial a line, in plan order
      events.jsonl    the hash-chained event log
      artifacts/      content-addressed payloads, artifacts/<2 hex>/<64 hex>
      bundles.jsonl   one observation bundle a finished trial
      scores.jsonl    one score record a (trial, scorer)
      report.json, report.md, report.html

A lock file keeps a second writer out; the manifest is replaced atomically, so a reader
never sees half of one.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from assay._digest import canonical_json, fast_json, loads
from assay.errors import EvidenceError, RunError
from assay.evidence._log import EventLog, FileSink, LineSink
from assay.evidence._recorder import TrialRecorder
from assay.evidence._store import ArtifactStore

MANIFEST_SCHEMA = "assay.run/1"
SPEC = "spec.json"
PLAN = "plan.jsonl"
EVENTS = "events.jsonl"
BUNDLES = "bundles.jsonl"
SCORES = "scores.jsonl"
MANIFEST = "manifest.json"
ARTIFACTS = "artifacts"
LOCK = ".lock"
REPORTS = ("report.json", "report.md", "report.html")


class RunWriter:
    """Writes one run's evidence; with ``path=None`` (dry run) it writes nothing."""

    def __init__(self, path: Path | None, extra_sinks: Iterable[LineSink] = ()) -> None:
        self.path = path
        self._files: dict[str, IO[bytes]] = {}
        self._lock: IO[bytes] | None = None
        sinks: list[LineSink] = list(extra_sinks)
        if path is None:
            self.store = ArtifactStore(Path("."), write=False)
        else:
            self._create(path)
            self._events = FileSink(path / EVENTS)
            sinks.insert(0, self._events)
            self.store = ArtifactStore(path / ARTIFACTS)
        self.log = EventLog(sinks)

    def _create(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
            if (path / MANIFEST).exists() or (path / SPEC).exists():
                raise RunError("run.exists", path=str(path))
            self._lock = open(path / LOCK, "wb")  # noqa: SIM115 - held for the run
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            for name in (PLAN, BUNDLES, SCORES):
                self._files[name] = open(path / name, "xb", buffering=1 << 16)  # noqa: SIM115
        except BlockingIOError:
            raise RunError("run.storage", path=str(path), reason="another assay holds it") from None
        except OSError as exc:
            raise RunError("run.storage", path=str(path), reason=exc.strerror or str(exc)) from None

    def write_spec(self, canonical: bytes) -> None:
        """Write the frozen spec bytes exactly as digested."""
        if self.path is not None:
            _write_atomic(self.path / SPEC, canonical)

    def write_plan_line(self, record: dict[str, Any]) -> None:
        """Append one planned trial."""
        if self.path is not None:
            self._files[PLAN].write(fast_json(record) + b"\n")

    def recorder(self, trial_id: str) -> TrialRecorder:
        """A recorder for one trial's events and artifacts."""
        return TrialRecorder(self.log, self.store, trial_id)

    def write_bundle(self, line: bytes) -> None:
        """Append one sealed bundle line."""
        if self.path is not None:
            self._files[BUNDLES].write(line + b"\n")

    def write_score(self, record: dict[str, Any]) -> None:
        """Append one score record."""
        if self.path is not None:
            self._files[SCORES].write(canonical_json(record) + b"\n")

    def flush(self) -> None:
        """Push everything buffered to the OS: events first, so no bundle precedes its events."""
        if self.path is None:
            return
        self._events.flush()
        for name in (BUNDLES, SCORES, PLAN):
            self._files[name].flush()

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Replace the manifest atomically."""
        if self.path is not None:
            self.flush()
            _write_atomic(self.path / MANIFEST, canonical_json(manifest))

    def write_file(self, name: str, data: bytes) -> None:
        """Write a derived file (a report) atomically."""
        if self.path is not None:
            _write_atomic(self.path / name, data)

    def close(self) -> None:
        """Close every file and release the lock."""
        self.log.close()
        for handle in self._files.values():
            handle.close()
        self._files.clear()
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def _write_atomic(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def read_manifest(path: Path) -> dict[str, Any]:
    """Read a run's manifest, or raise EvidenceError saying why it is not a run."""
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise EvidenceError("run.not_a_run", path=str(path), reason="no such folder")
    try:
        manifest = loads(manifest_path.read_bytes())
    except FileNotFoundError:
        raise EvidenceError(
            "run.not_a_run", path=str(path), reason="manifest.json is missing"
        ) from None
    except (OSError, ValueError) as exc:
        reason = f"manifest.json cannot be read ({exc})"
        raise EvidenceError("run.not_a_run", path=str(path), reason=reason) from None
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        reason = "manifest.json is not an assay manifest"
        raise EvidenceError("run.not_a_run", path=str(path), reason=reason)
    return manifest
