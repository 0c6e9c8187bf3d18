"""The run directory: where a run's evidence lives, and the one writer allowed in it.

    RUN/
      manifest.json   status, digests of the files below, the event chain's last hash
      spec.json       the frozen spec (canonical JSON; its SHA-256 is the spec digest)
      plan.jsonl      one planned trial a line, in plan order
      events.jsonl    the hash-chained event log
      artifacts/      content-addressed payloads: pack-NNNN.bin records (under 64 KiB),
                      <2 hex>/<64 hex> files (64 KiB or more), pack-NNNN.idx indexes
      bundles.jsonl   one observation bundle a finished trial
      bundles.idx     the bundles' index by trial id (written when sealed)
      scores.jsonl    one score record a (trial, scorer)
      report.json, report.md, report.html

A lock file keeps a second writer out; the manifest is replaced atomically, so a reader
never sees half of one.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from assay._digest import canonical_json, fast_json_lines, file_sha256, loads
from assay.errors import EvidenceError, RunError
from assay.evidence._buckets import Buckets
from assay.evidence._compactor import Compactor
from assay.evidence._durable import THREADS, at_once, sync_path
from assay.evidence._framed import compact_run, open_evidence
from assay.evidence._index import BUNDLE_ENTRY, bundle_entries_of
from assay.evidence._layout import (
    ARTIFACTS,
    BUNDLES,
    EVENTS,
    LOCK,
    MANIFEST,
    MANIFEST_SCHEMA,
    PLAN,
    SCORES,
    SPEC,
)
from assay.evidence._log import GENESIS, EventLog, FileSink, LineSink
from assay.evidence._recorder import BATCH_SECONDS, TrialRecorder
from assay.evidence._resume import ResumePoint, find_resume_point
from assay.evidence._store import ArtifactStore

if TYPE_CHECKING:
    from concurrent.futures import Executor

PLAN_BATCH = 1024
"""Planned trials encoded at once into ``plan.jsonl`` (their lines: ~140 KB)."""


class RunWriter:
    """Writes one run's evidence; with ``path=None`` (dry run) it writes nothing.

    Bundle and score lines wait in memory until ``flush``, which pushes the event log
    first: a bundle never reaches the disk before the events it lists, so after a crash
    every whole bundle on disk has all its events too.
    """

    def __init__(
        self,
        path: Path | None,
        extra_sinks: Iterable[LineSink] = (),
        *,
        resume: bool = False,
    ) -> None:
        self.path = path
        self._files: dict[str, IO[bytes]] = {}
        self._pending: dict[str, list[bytes]] = {BUNDLES: [], SCORES: []}
        self._bundle_lines = self._pending[BUNDLES]  # the same lists, without a dict
        self._score_lines = self._pending[SCORES]  # lookup a line (two a trial)
        self._lock: IO[bytes] | None = None
        self._events: FileSink | None = None
        self._ahead: Compactor | None = None  # compacting whole frames while the run goes
        self._bundles_at = 0  # where the bundle lines this writer appends start
        self._bundles_end = 0  # and end: the offset of the next one
        self._bundle_index: Buckets | None = None  # their bundles.idx records (_buckets)
        sinks: list[LineSink] = list(extra_sinks)
        self.resume_point: ResumePoint | None = None
        head, count = GENESIS, 0
        if path is None:
            self.store = ArtifactStore(Path("."), write=False)
        else:
            self.resume_point = self._open(path, resuming=resume)
            if self.resume_point is not None:
                head, count = self.resume_point.head, self.resume_point.count
            if not resume:
                (path / EVENTS).unlink(missing_ok=True)  # leftovers of a run never sealed
            self._events = FileSink(path / EVENTS)
            sinks.insert(0, self._events)
            self.store = ArtifactStore(path / ARTIFACTS, background=True)
        self.log = EventLog(sinks, head, count)

    def _open(self, path: Path, *, resuming: bool) -> ResumePoint | None:
        """Lock and open *path*'s files; where a resumed run goes on (returned, not set
        here: a compiled build trusts mypy's narrowing of the attribute to None)."""
        point: ResumePoint | None = None
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._lock = open(path / LOCK, "ab")  # noqa: SIM115 - held for the run
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if not resuming and (path / MANIFEST).exists():
                raise RunError("run.exists", path=str(path))
            if resuming:
                # Under the lock: nobody else may be appending while torn tails are cut,
                # and a resume that lost a race must see the run the winner completed.
                if b'"status":"complete"' in (path / MANIFEST).read_bytes():
                    raise RunError("run.complete", path=str(path))
                point = find_resume_point(path)
            for name in (BUNDLES, SCORES):
                mode = "ab" if resuming else "wb"  # no manifest: nothing here is a run
                self._files[name] = open(path / name, mode, buffering=1 << 16)  # noqa: SIM115
            self._bundle_index = Buckets(BUNDLE_ENTRY.size, path)
            self._bundles_at = os.fstat(self._files[BUNDLES].fileno()).st_size
            self._bundles_end = self._bundles_at
            # The plan is derived from the spec: a resumed run simply writes it again, under
            # a temporary name until ``plan_written`` renames it over the old one.
            self._files[PLAN] = open(_temp_name(path / PLAN), "wb", buffering=1 << 16)  # noqa: SIM115
            return point
        except BlockingIOError:
            self._release()
            raise RunError("run.locked", path=str(path)) from None
        except OSError as exc:
            self._release()
            raise RunError.storage(path, exc) from exc
        except RunError:
            self._release()
            raise

    def write_spec(self, canonical: bytes) -> None:
        """Write the frozen spec bytes exactly as digested."""
        if self.path is not None:
            write_atomic(self.path / SPEC, canonical)

    def write_plan(self, records: Iterable[Any]) -> None:
        """Append the planned trials, a line each: ``Trial``s (a struct encodes as the dict
        of its fields, in order: the same bytes, without the dict made for every trial),
        encoded ``PLAN_BATCH`` at a time (one call, not one each, and bounded memory).
        The trials are walked even with no folder (a dry run): the walk keeps the ids'
        digests for the run's own walk (``Plan``)."""
        if self.path is None:
            for _ in records:
                pass
            return
        write, walk = self._files[PLAN].write, iter(records)
        while batch := list(islice(walk, PLAN_BATCH)):
            write(fast_json_lines(batch))

    def plan_written(self) -> None:
        """Put the plan written so far in place of the old one, atomically.

        A resumed run rewrites a plan that is already there: written over in place, a
        ``kill -9`` would leave it empty or half-written and the run would no longer
        verify. So the new plan goes to a temporary file in the run folder, reaches the
        disk (fsync) and is renamed over the old one, and the rename itself is made
        durable (fsync of the folder). A fresh run's plan gets the same treatment: a
        crash never leaves a partial ``plan.jsonl``."""
        if self.path is None:
            return
        handle = self._files[PLAN]
        handle.flush()
        os.fsync(handle.fileno())
        os.replace(_temp_name(self.path / PLAN), self.path / PLAN)
        sync_path(self.path)
        if self._ahead is None:  # the files it reads are the run's own from here on
            self._ahead = Compactor(self.path)
            self._ahead.poke()

    def recorder(self, trial_id: str) -> TrialRecorder:
        """A recorder for one trial's events and artifacts."""
        return TrialRecorder(self.log, self.store, trial_id)

    def write_bundle(self, line: bytes) -> None:
        """Queue one sealed bundle line; it reaches the file at the next ``flush``."""
        if self.path is not None:
            self._bundle_lines.append(line)  # its newline added at the flush

    def write_score(self, record: dict[str, Any]) -> bytes:
        """Queue one score record (it reaches the file after its bundle); return its line."""
        line = canonical_json(record)
        if self.path is not None:
            self._score_lines.append(line)
        return line

    def flush(self) -> None:
        """Push everything buffered to the OS: events first, so no bundle precedes its events."""
        if self._events is None:
            return
        try:
            self.store.drain()  # every artifact a queued bundle names is on disk first
        except OSError as exc:
            raise RunError.storage(self.path, exc) from exc
        self.log.write_held(BATCH_SECONDS)  # a waiting trial's events, 2 s on
        self._events.flush()
        for name in (BUNDLES, SCORES):
            handle, pending = self._files[name], self._pending[name]
            if pending:  # the lines, each with its newline: joined, not one copy a line
                pending.append(b"")
                handle.write(b"\n".join(pending))
                pending.pop()
                if name == BUNDLES:
                    self._index_bundles(pending)
                pending.clear()
            handle.flush()
        self._files[PLAN].flush()
        if self._ahead is not None:
            self._ahead.poke()

    def _index_bundles(self, lines: list[bytes]) -> None:
        """Make the bundles.idx records of *lines* as they go to the file: the seal then
        writes the index without reading the file back (a tenth of a 5,000-sample run's
        sealing); all of a flush's lines at once (``bundle_entries_of``)."""
        records = self._bundle_index
        assert records is not None  # made with the files
        records.add_many(bundle_entries_of(lines, self._bundles_end))
        self._bundles_end += sum(map(len, lines)) + len(lines)  # and their newlines

    def bundle_entries(self) -> tuple[int, Buckets] | None:
        """Where the bundle lines this writer wrote start, and their bundles.idx records
        (``write_bundle_index``'s *known*)."""
        records = self._bundle_index
        return (self._bundles_at, records) if records is not None else None

    def digest(self, name: str) -> str:
        """The SHA-256 (hex) of the record file *name* as it is now (flushed): from the
        frames hashed while they were compacted ahead, else read whole."""
        assert self.path is not None
        ahead = self._ahead.digest(name) if self._ahead is not None else None
        return ahead if ahead is not None else file_sha256(self.path / name)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Replace the manifest atomically. A ``complete`` one only once everything it
        lists is on the disk, not just handed to the OS: a power cut must not leave a
        manifest saying complete (which resume refuses) over lines that were lost."""
        if self.path is not None:
            self.flush()
            status = manifest.get("status")
            complete = status == "complete"
            if status in ("complete", "interrupted"):
                from concurrent.futures import ThreadPoolExecutor

                ahead, self._ahead = self._ahead, None
                # one set of threads for the seal's compression and fsync batches
                with ThreadPoolExecutor(THREADS, "assay-seal") as pool:
                    # before the manifest: a kill here leaves a run to resume
                    compact_run(self.path, ahead, pool)
                    if complete:
                        _sync_tree(self.path, pool)
            write_atomic(self.path / MANIFEST, canonical_json(manifest))
            if complete:
                sync_path(self.path)  # the rename itself

    def write_files(self, files: dict[str, bytes]) -> None:
        """Write derived files (the reports) atomically, by name, their fsyncs waited
        for together."""
        if self.path is not None:
            folder = self.path
            at_once(lambda name: write_atomic(folder / name, files[name]), list(files))

    def close(self) -> None:
        """Flush queued lines, close every file and release the lock."""
        try:
            self.flush()
        finally:
            try:
                self.store.close()
            finally:
                self.log.close()
                self._events = None
                ahead, self._ahead = self._ahead, None
                try:
                    if ahead is not None:  # not sealed: its temporary files go
                        ahead.discard()
                finally:
                    self._release()  # the lock last: a resume may start once it is free

    def _release(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()
        if self._bundle_index is not None:
            self._bundle_index.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def _sync_tree(root: Path, pool: Executor) -> None:
    """fsync every file and folder under *root*: a dozen files, and any loose artifacts
    (64 KB or more each). The kernel has been writing them back while the run went on,
    so this waits for little: 0.18 s of wall and 0.04 s of CPU right after a
    100,000-trial run (360 MB) here. Issued together, on threads: ext4 commits its
    journal once for the fsyncs waiting at the same time, not once for each (15 files:
    4-13 ms against 12-51 ms one after the other, on a busy disk)."""
    paths: list[Path] = []
    for folder, _, files in os.walk(root):
        paths.extend(Path(folder, name) for name in files)
        paths.append(Path(folder))
    at_once(sync_path, paths, pool)


def _temp_name(path: Path) -> Path:
    """Where *path* is written before it is renamed into place (``.NAME.tmp``)."""
    return path.with_name(f".{path.name}.tmp")


def write_atomic(path: Path, data: bytes) -> None:
    """Write *path* whole or not at all: to a temporary name, synced, then renamed."""
    temp = _temp_name(path)
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


MANIFEST_MAX_BYTES = 16 * 1024 * 1024
"""A manifest names a run's files and their digests, a few KiB (a merged run's lists its
shards): a bigger ``manifest.json`` is not one, and is refused before it is read."""


def read_manifest(path: Path) -> dict[str, Any]:
    """Read a run's manifest, or raise EvidenceError saying why it is not a run."""
    manifest_path = path / MANIFEST
    if not path.is_dir():
        reason = "a file, not a run's folder" if path.exists() else "no such folder"
        raise EvidenceError("run.not_a_run", path=str(path), reason=reason)
    try:
        status = manifest_path.stat()
        if not stat.S_ISREG(status.st_mode):  # never read: /dev/zero, a pipe
            reason = "manifest.json is not a regular file"
            raise EvidenceError("run.not_a_run", path=str(path), reason=reason)
        if status.st_size > MANIFEST_MAX_BYTES:  # not read whole into memory either
            reason = f"manifest.json is {status.st_size:,} bytes, more than a manifest holds"
            raise EvidenceError("run.not_a_run", path=str(path), reason=reason)
        manifest = loads(manifest_path.read_bytes())
    except FileNotFoundError:
        if (path / SPEC).exists():  # stopped between its first two writes: nothing ran
            raise EvidenceError("run.not_started", path=str(path)) from None
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


def score_records(path: Path) -> Iterator[dict[str, Any]]:
    """The score records of the run at *path* (of each shard, for a merged run), read
    back one line at a time (a run's scores can be more than memory should hold)."""
    from assay.evidence._shards import trial_files

    for file in trial_files(path, SCORES):
        with open_evidence(file) as handle:
            for line in handle:
                yield loads(line)
