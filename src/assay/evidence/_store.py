"""The content-addressed artifact store: every payload is a file named by its SHA-256.

Outputs, inputs and other payloads are written once under ``artifacts/<2 hex>/<64 hex>``;
the same bytes are stored once however many trials produce them. Because the name is
the digest, changing one byte of an artifact is caught by hashing it again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import msgspec


class ArtifactRef(msgspec.Struct, frozen=True):
    """A pointer to stored bytes: their digest, size and media type."""

    sha256: str
    size: int
    media: str


class ArtifactStore:
    """Write-once files under *root*, named by the SHA-256 of their content."""

    def __init__(self, root: Path, *, write: bool = True) -> None:
        self.root = root
        self._root = str(root)
        self._write = write
        self._made: set[str] = set()
        self._suffix = f".{os.getpid()}.tmp"

    def path(self, sha256: str) -> Path:
        """Where the artifact with digest *sha256* lives."""
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, media: str) -> ArtifactRef:
        """Store *data* (if new) and return its reference."""
        digest = hashlib.sha256(data).hexdigest()
        if self._write:
            self._write_once(digest, data)
        return ArtifactRef(digest, len(data), media)

    def get(self, sha256: str) -> bytes:
        """Read the artifact with digest *sha256* (not verified; see ``verify``)."""
        with open(f"{self._root}/{sha256[:2]}/{sha256}", "rb") as handle:
            return handle.read()

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
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, final)
