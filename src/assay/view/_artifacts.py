"""Reading one artifact of a run, checked against its digest, without indexing the store.

``ArtifactStore.get`` loads an index of every pack after 64 lookups (right for re-scoring
a whole run, tens of MB on a big one); a viewer shows a page of 50 rows, so each lookup
here goes through the packs' sorted ``.idx`` files (a bisection) and keeps nothing.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from assay.errors import EvidenceError
from assay.evidence import ARTIFACTS, ArtifactStore, pack_names
from assay.evidence._index import find_in_pack_index, pack_index

SHA256 = re.compile(r"[0-9a-f]{64}")


def read_artifact(run: Path, sha256: str) -> bytes:
    """The bytes of artifact *sha256*; EvidenceError if they are gone or changed."""
    root = run / ARTIFACTS
    data = _packed(root, sha256)
    if data is None:
        try:
            data = (root / sha256[:2] / sha256).read_bytes()
        except OSError:
            raise _tampered(run, f"{ARTIFACTS}: {sha256} is gone") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise _tampered(run, f"{ARTIFACTS}: {sha256} changed")
    return data


def _packed(root: Path, sha256: str) -> bytes | None:
    unindexed = False
    for name in pack_names(root):
        index = pack_index(root / name)
        unindexed = unindexed or not index.exists()
        found = find_in_pack_index(index, sha256)
        if found is not None:
            with open(root / name, "rb") as handle:
                handle.seek(found[0])
                return handle.read(found[1])
    if unindexed:  # a run still going: its packs get their indexes when it is sealed
        try:
            return ArtifactStore(root, write=False).get(sha256)
        except OSError:
            return None
    return None


def _tampered(run: Path, first: str) -> EvidenceError:
    return EvidenceError("evidence.tampered", path=str(run), count=1, first=first)
