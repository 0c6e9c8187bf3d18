"""The sample table's parts: its columns (codes, digests) and how it reads a record file.

Each record file is read in chunks of whole lines, every line decoded into a narrow struct
that keeps only what the table shows, and every byte hashed on the way, so the table can
be compared with the digests the sealed manifest lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads
from assay.evidence import MANIFEST
from assay.evidence._framed import open_evidence, read_evidence


class PlanLine(msgspec.Struct):
    index: int
    trial_id: str
    sample_id: str | int
    target_id: str
    repetition: int = 1


class BundleTrial(msgspec.Struct):
    index: int


class Observation(msgspec.Struct):
    output: str | None = None
    media: str = "text/plain"


class BundleArtifacts(msgspec.Struct):
    sample: str | None = None


class BundleLine(msgspec.Struct):
    trial: BundleTrial
    state: str
    observation: Observation
    artifacts: BundleArtifacts = msgspec.field(default_factory=BundleArtifacts)


class ScoreLine(msgspec.Struct):
    index: int
    scorer_id: str
    status: str
    value: float | None = None


class Codes:
    """Strings stored once, referred to by a small integer."""

    def __init__(self, *first: str) -> None:
        self.names: list[str] = list(first)
        self._code = {name: i for i, name in enumerate(first)}

    def find(self, name: str) -> int:
        """The code of *name*, or -1 (matches nothing) when no trial has it."""
        return self._code.get(name, -1)

    def code(self, name: str) -> int:
        found = self._code.get(name)
        if found is None:
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found


CHUNK = 1 << 22
"""Bytes read (and decoded as one JSON array) at a time: few calls, bounded memory."""


class HashedChunks:
    """A JSONL file read in chunks of whole lines, each decoded as one JSON array of
    records, with every byte read hashed (to compare with the manifest). A torn last
    line is hashed but not decoded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()
        self.unreadable = 0

    def lines(self) -> Iterator[bytes]:
        """Blocks of whole lines, each ending with a newline."""
        try:
            handle = open_evidence(self.path)
        except FileNotFoundError:
            return
        with handle:
            rest = b""
            while data := handle.read(CHUNK):
                self.digest.update(data)
                data = rest + data
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    yield data[:cut]

    def records(self, decoder: msgspec.json.Decoder[Any]) -> Iterator[Any]:
        """Each whole line's record, decoded a chunk at a time."""
        for _, item in self.placed_records(decoder, offsets=False):
            yield item

    def placed_records(
        self, decoder: msgspec.json.Decoder[Any], *, offsets: bool = True
    ) -> Iterator[tuple[int, Any]]:
        """Each whole line's byte offset (0 unless *offsets*) and record."""
        offset = 0
        for block in self.lines():
            try:
                items = decoder.decode(b"[" + block[:-1].replace(b"\n", b",") + b"]")
                starts = line_starts(block) if offsets else [0] * len(items)
            except (msgspec.DecodeError, msgspec.ValidationError):
                starts = line_starts(block)
                items = self._one_by_one(block, starts, decoder)
            for start, item in zip(starts, items, strict=True):
                if item is not None:
                    yield offset + start, item
            offset += len(block)

    def _one_by_one(
        self, block: bytes, starts: list[int], decoder: msgspec.json.Decoder[Any]
    ) -> list[Any]:
        """A block with a line that is not a record: each line alone, the bad ones None
        (counted: the table names the file as changed)."""
        items: list[Any] = []
        for start, end in zip(starts, [*starts[1:], len(block)], strict=True):
            try:
                items.append(decoder.decode(b"[" + block[start : end - 1] + b"]")[0])
            except (msgspec.DecodeError, msgspec.ValidationError, IndexError):
                items.append(None)
                self.unreadable += 1
        return items


def line_starts(block: bytes) -> list[int]:
    """Where each line of *block* (whole lines) starts."""
    starts = [0]
    at = block.find(b"\n")
    while at >= 0 and at + 1 < len(block):
        starts.append(at + 1)
        at = block.find(b"\n", at + 1)
    return starts


class Shas:
    """Optional SHA-256 digests, 32 bytes each in one buffer (all zeros: none)."""

    NONE = bytes(32)

    def __init__(self, count: int) -> None:
        self.data = bytearray(32 * count)

    def set(self, at: int, sha: str | None) -> None:
        if sha:
            self.data[32 * at : 32 * at + 32] = bytes.fromhex(sha)

    def get(self, at: int) -> str | None:
        raw = bytes(self.data[32 * at : 32 * at + 32])
        return None if raw == self.NONE else raw.hex()


def manifest_of(run: Path) -> dict[str, Any]:
    """The run's manifest, or ``{}`` while there is none (or it is unreadable)."""
    try:
        manifest = loads(read_evidence(run / MANIFEST))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def listed_digests(run: Path) -> dict[str, str]:
    """The file digests a sealed manifest lists (none while the run is going)."""
    files = manifest_of(run).get("files")
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
