"""Reading artifacts of a run, each checked against its digest, without indexing the store.

``ArtifactStore.get`` loads an index of every pack after 64 lookups (right for re-scoring
a whole run, tens of MB on a big one); a viewer shows a page of 50 rows, so each lookup
here bisects the packs' sorted ``.idx`` files, mapped once per reader and kept, which
holds nothing in memory but the pages the bisections touch.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import re
import threading
from pathlib import Path

from assay.errors import EvidenceError
from assay.evidence import ARTIFACTS, ArtifactStore, pack_names
from assay.evidence._framed import open_evidence, read_evidence
from assay.evidence._index import _PACK, find_key, pack_index
from assay.evidence._plain import open_plain
from assay.evidence._shards import trial_files

SHA256 = re.compile(r"[0-9a-f]{64}")


class ArtifactReader:
    """Checked reads of one run's artifacts, through its packs' indexes."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.root = run / ARTIFACTS
        self._lock = threading.Lock()
        self._indexes: list[tuple[str, mmap.mmap | None]] | None = None

    def read(self, sha256: str) -> bytes:
        """The bytes of artifact *sha256*; EvidenceError if they are gone or changed."""
        data = self._packed(sha256)
        if data is None:
            try:
                data = read_evidence(self.root / sha256[:2] / sha256)
            except OSError:
                raise _tampered(self.run, f"{ARTIFACTS}: {sha256} is gone") from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise _tampered(self.run, f"{ARTIFACTS}: {sha256} changed")
        return data

    def _packs(self) -> list[tuple[str, mmap.mmap | None]]:
        """Each pack with its mapped index (None: no index yet, the run is going on)."""
        with self._lock:
            if self._indexes is None:
                self._indexes = [
                    (name, _mapped(pack_index(self.root / name))) for name in pack_names(self.root)
                ]
            return self._indexes

    def _packed(self, sha256: str) -> bytes | None:
        key = bytes.fromhex(sha256)
        unindexed = False
        for name, index in self._packs():
            if index is None:
                unindexed = True
                continue
            at = find_key(index, _PACK, key)
            if at is not None:
                _, offset, size = _PACK.unpack_from(index, at * _PACK.size)
                with open_evidence(self.root / name) as handle:
                    handle.seek(offset)
                    return handle.read(size)
        if unindexed:  # a run still going: its packs get their indexes when it is sealed
            try:
                return ArtifactStore(self.root, write=False).get(sha256)
            except OSError:
                return None
        return None


def read_artifact(run: Path, sha256: str) -> bytes:
    """One artifact of *run*, checked (a reader made for one read); of a merged run, from
    the first shard it holds that has it."""
    *others, last = [file.parent for file in trial_files(run, ARTIFACTS)]
    for folder in others:
        with contextlib.suppress(EvidenceError):
            return ArtifactReader(folder).read(sha256)
    return ArtifactReader(last).read(sha256)


def _mapped(index: Path) -> mmap.mmap | None:
    try:
        with open_plain(index) as handle:
            if handle.seek(0, 2) == 0:
                return None
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return None


def _tampered(run: Path, first: str) -> EvidenceError:
    return EvidenceError("evidence.tampered", path=str(run), count=1, first=first)
