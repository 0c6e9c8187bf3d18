"""The content-addressed artifact store: every payload is named by its SHA-256.

Payloads of 64 KiB or more are files ``artifacts/<2 hex>/<64 hex>``; smaller ones are
records in ``artifacts/pack-NNNN.bin``, each headed by its digest (see ``_pack``). Either
way the same bytes are stored once per run in the common case, and changing one byte
of an artifact is caught by hashing it again against its name.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO

import msgspec

from assay.evidence._buckets import HELD, Buckets
from assay.evidence._framed import open_evidence
from assay.evidence._index import (
    PACK_ENTRY,
    entries_wanted,
    find_in_pack_index,
    index_chunks,
    pack_index,
)
from assay.evidence._pack import (
    LOOSE_MIN,
    PackError,
    PackRecord,
    next_pack_name,
    pack_names,
    scan_headers,
)
from assay.evidence._pack_finder import PackFinder
from assay.evidence._pack_format import MAGIC

_sha256 = hashlib.sha256
_entry = PACK_ENTRY.pack  # put_digest's, bound once (2 to 4 calls a trial)
_RECORD = MAGIC + b"%s %d\n%s\n"  # ``record_bytes``' format, its constant part joined

RECENT = 16_384
"""Digests remembered for de-duplication, at most; memory stays flat however long the run.

They are kept in two generations of ``RECENT // 2`` (sets of hex strings, about 2.5 MB
when full; a run fills them after ~5,000 trials, so memory is the same at 10,000 trials
as at a million): new digests go to the current one; when it is full it becomes the
previous one and the previous is dropped. A digest stored within the last ``RECENT // 2``
new ones is always found, so a repeat that matters (the epochs of one sample, an
answer stored twice, a system prompt every trial uses) is stored once; one found in the
previous generation is put back in the current, so a payload used again and again is
never forgotten. An older duplicate is merely stored twice. Two sets, not an ordered
dict kept in use order: a put costs a lookup or two (~85 ns) instead of an ordered
dict's lookup, insert, eviction and reordering (~190 ns), four puts a trial."""


class ArtifactRef(msgspec.Struct, frozen=True):
    """A pointer to stored bytes: their digest, size and media type."""

    sha256: str
    size: int
    media: str


class ArtifactStore:
    """Write-once files under *root*, named by the SHA-256 of their content.

    With ``background=True`` files are created on a writer thread: creating a file is
    kernel time, which then runs on the other core while trials go on. ``drain`` waits
    for every queued write (the run writer calls it before any bundle reaches the disk,
    so no bundle ever names an artifact that is not there) and raises a storage error
    the thread met. The queue is bounded, so a slow disk slows the run down instead of
    filling memory.
    """

    def __init__(
        self, root: Path, *, write: bool = True, background: bool = False, keep_open: bool = False
    ) -> None:
        self.root = root
        self._root = str(root)
        self._write = write
        self._made: set[str] = set()
        self._suffix = f".{os.getpid()}.tmp"
        self._error: OSError | None = None
        self._queue: queue.Queue[tuple[str, bytes] | None] | None = None
        self._drainer: threading.Thread | None = None
        self._pack: IO[bytes] | None = None
        self._pack_name = ""
        self._pack_size = 0
        self._entries: Buckets | None = None  # pack_entry per record written (_buckets)
        self._held: list[bytearray] = []  # ``_entries.held``, looked up once
        self._recent: set[str] = set()  # RECENT's two generations: the current one,
        self._older: set[str] = set()  # and the one before it
        self._generation = RECENT // 2
        self._index: dict[str, PackRecord] | None = None
        self._finders: dict[str, PackFinder] | None = None
        self._lookups = 0
        self._has_packs: bool | None = None
        self._readers: dict[str, IO[bytes]] = {}
        self._keep_open = keep_open
        if write and background:
            self._queue = queue.Queue(maxsize=4096)
            self._drainer = threading.Thread(
                target=self._drain_forever, name="assay-artifacts", daemon=True
            )
            self._drainer.start()

    def path(self, sha256: str) -> Path:
        """Where the artifact would live as a loose file."""
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, media: str) -> ArtifactRef:
        """Store *data* (if new) and return its reference."""
        return ArtifactRef(self.put_digest(data), len(data), media)

    def put_digest(self, data: bytes) -> str:
        """``put``, returning the hex digest alone (the trial path's: no reference made).

        A small payload not stored recently is appended to the pack (``record_bytes``
        and ``pack_entry`` inlined, 2 to 4 a trial), its index entry put in its bucket
        (``Buckets.add`` inlined)."""
        raw = _sha256(data).digest()  # the index entry's bytes, hex for the name
        digest = raw.hex()
        if not self._write:
            return digest
        size = len(data)
        if size >= LOOSE_MIN:
            if self._queue is not None:
                self._raise_failure()
                self._queue.put((digest, data))
            else:
                self._write_once(digest, data)
            return digest
        recent = self._recent
        if digest in recent:  # stored recently: not again
            return digest
        known = digest in self._older  # stored a generation ago: kept, not stored again
        recent.add(digest)
        if len(recent) >= self._generation:  # bounded (RECENT): the older one dropped
            self._older, self._recent = recent, set()
        if known:
            return digest
        pack = self._pack
        if pack is None:
            pack = self._open_pack()
        record = _RECORD % (digest.encode(), size, data)  # record_bytes
        pack.write(record)
        end = self._pack_size = self._pack_size + len(record)
        held = self._held[raw[0]]  # the payload ends one byte (\n) before the record
        held += _entry(raw, end - size - 1, size)
        if len(held) >= HELD:
            self._entries.spill(raw[0])  # type: ignore[union-attr]  # made with the pack
        return digest

    def _open_pack(self) -> IO[bytes]:
        self.root.mkdir(parents=True, exist_ok=True)
        self._pack_name = next_pack_name(self.root)
        self._pack = open(self.root / self._pack_name, "ab", buffering=1 << 20)  # noqa: SIM115
        self._entries = Buckets(PACK_ENTRY.size, self.root)
        self._held = self._entries.held
        return self._pack

    def written_packs(self) -> dict[str, Buckets]:
        """The pack this store wrote, with its index entries as recorded while writing
        (so sealing need not read the pack back): ``{name: entries}``, or nothing."""
        if self._pack is None or self._entries is None:
            return {}
        self._pack.flush()
        return {self._pack_name: self._entries}

    def get_many(self, digests: Iterable[str]) -> dict[str, bytes]:
        """The artifacts *digests* by digest (those not stored are left out), found in
        one pass over each pack's index, in C: for the few thousand a report shows, where
        ``get`` would build an index of every record (a tenth of a big run's CPU)."""
        wanted = {bytes.fromhex(sha): sha for sha in digests}
        found: dict[str, bytes] = {}
        for name in pack_names(self.root) if wanted else ():
            if name == self._pack_name and self._entries is not None:
                self._pack.flush()  # type: ignore[union-attr]  # being written: what
                chunks = self._entries.chunks()  # was recorded
            else:
                chunks = index_chunks(self.root / name)
            with open_evidence(self.root / name) as handle:  # plain, or compacted at seal
                for sha, offset, size in entries_wanted(chunks, wanted):
                    handle.seek(offset)
                    found.setdefault(wanted[sha], handle.read(size))
        for name in wanted.values():
            if name not in found and os.path.exists(loose := f"{self._root}/{name[:2]}/{name}"):
                with open(loose, "rb") as handle:
                    found[name] = handle.read()
        return found

    def get(self, sha256: str) -> bytes:
        """Read the artifact with digest *sha256* (not verified; see ``verify``)."""
        record = self._lookup(sha256) if self._packed() else None
        if record is None:
            with open(f"{self._root}/{sha256[:2]}/{sha256}", "rb") as handle:
                return handle.read()
        if not self._keep_open:  # open, read, close
            with open_evidence(self.root / record.pack) as handle:
                handle.seek(record.offset)
                return handle.read(record.size)
        # many reads (re-scoring a whole run): packs stay open until ``close``
        reader = self._readers.get(record.pack)
        if reader is None:
            reader = self._readers[record.pack] = open_evidence(self.root / record.pack)
        reader.seek(record.offset)
        return reader.read(record.size)

    def _packed(self) -> bool:
        if self._has_packs is None or (not self._has_packs and self._pack is not None):
            self._has_packs = bool(pack_names(self.root))
        return self._has_packs

    def locate(self, sha256: str) -> tuple[Path, int, int]:
        """``(file, offset, size)`` of an artifact's bytes (for tools and tests)."""
        loose = self.path(sha256)
        if loose.exists():
            return loose, 0, loose.stat().st_size
        record = self._lookup(sha256)
        if record is None:
            raise FileNotFoundError(f"artifact {sha256} is in no pack and no file")
        return self.root / record.pack, record.offset, record.size

    def _lookup(self, sha256: str) -> PackRecord | None:
        # A few lookups (one trial's evidence) go through the packs' .idx files; many
        # (re-scoring a whole run) are cheaper from one in-memory index of every pack.
        self._lookups += 1
        if self._index is None and self._lookups <= 64:
            return self._lookup_indexed(sha256)
        return self._lookup_scanned(sha256)

    def _lookup_indexed(self, sha256: str) -> PackRecord | None:
        for name in pack_names(self.root):
            index = pack_index(self.root / name)
            if index.exists():
                found = find_in_pack_index(index, sha256)
                if found is not None:
                    return PackRecord(name, -1, found[0], found[1], sha256)
        return self._lookup_scanned(sha256)

    def _lookup_scanned(self, sha256: str) -> PackRecord | None:
        if self._index is None:
            self._index_packs()
        assert self._index is not None and self._finders is not None
        for name, finder in self._finders.items():
            found = finder.find(sha256)
            if found is not None:
                return PackRecord(name, -1, found[0], found[1], sha256)
        return self._index.get(sha256)

    def _index_packs(self) -> None:
        """Ready every pack for many lookups: a sealed run's (read-only) through its
        ``.idx`` on disk (``PackFinder``: a few MB for a million records), a pack being
        written or without an index by one in-memory index of its headers."""
        if self._pack is not None:
            self._pack.flush()
        self._index, self._finders = {}, {}
        for name in pack_names(self.root):
            finder = None if self._write else PackFinder.open(self.root / name)
            if finder is not None:
                self._finders[name] = finder
                continue
            for item in scan_headers(self.root / name):
                if not isinstance(item, PackError):
                    self._index.setdefault(item.sha256, item)

    def drain(self) -> None:
        """Push every stored artifact to the OS; raise what the writer met."""
        if self._pack is not None:
            self._pack.flush()
        if self._queue is not None:
            self._queue.join()
        self._raise_failure()

    def close(self) -> None:
        """Finish queued writes, close the pack and readers, stop the writer thread."""
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        for finder in (self._finders or {}).values():
            finder.close()
        self._index = self._finders = None
        if self._pack is not None:
            self._pack.close()
            self._pack = None
        if self._entries is not None:
            self._entries.close()
            self._entries = None
        if self._queue is not None and self._drainer is not None:
            self._queue.put(None)
            self._drainer.join()
            self._queue = None
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _drain_forever(self) -> None:
        assert self._queue is not None
        while (item := self._queue.get()) is not None:
            try:
                if self._error is None:
                    self._write_once(*item)
            except OSError as exc:
                self._error = exc
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def _write_once(self, digest: str, data: bytes) -> None:
        # Hot path (every output of every trial): plain os calls on str paths, and a
        # temporary name renamed into place, so a crash never leaves a torn file under
        # a digest name.
        prefix = digest[:2]
        folder = f"{self._root}/{prefix}"
        if prefix not in self._made:
            os.makedirs(folder, exist_ok=True)
            self._made.add(prefix)
        final = f"{folder}/{digest}"
        if os.path.exists(final):
            return
        temp = f"{folder}/.{digest}{self._suffix}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)  # not in the slice: mypyc evaluates that twice
                view = view[written:]
        finally:
            os.close(fd)
        os.replace(temp, final)
