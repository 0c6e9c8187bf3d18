"""Pack files: small artifacts appended to one file, each record named by its SHA-256.

Creating a file costs the kernel tens to hundreds of microseconds on a busy disk, more
than everything else a trial does; appending a record costs well under one. So, as git
does with its packs, payloads under ``LOOSE_MIN`` bytes are appended to
``artifacts/pack-NNNN.bin`` and larger ones stay loose files named by their digest.
A record is readable as it stands::

    assay-artifact <64 hex sha256> <size>\\n<size bytes>\\n

so changing one byte of a payload is caught by hashing it again against its header.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from assay.evidence._framed import evidence_size, open_evidence
from assay.evidence._pack_format import HEADER_MAX as _HEADER_MAX
from assay.evidence._pack_format import MAGIC, pack_names

__all__ = ["MAGIC", "pack_names"]  # defined in ``_pack_format``, imported from here too
LOOSE_MIN = 65_536
"""Payloads of at least this many bytes are loose files; smaller ones go to a pack."""


class PackRecord(msgspec.Struct, frozen=True):
    """Where one record sits: its pack, the offset of its payload, and what it claims."""

    pack: str
    header_offset: int
    offset: int
    size: int
    sha256: str


class PackError(msgspec.Struct, frozen=True):
    """A pack that stops making sense at *header_offset* (torn or edited)."""

    pack: str
    header_offset: int


def next_pack_name(root: Path) -> str:
    """A pack name not used yet (a resumed run appends to a new pack)."""
    existing = pack_names(root)
    number = int(existing[-1][5:9]) + 1 if existing else 1
    return f"pack-{number:04d}.bin"


def record_bytes(sha256: str, data: bytes) -> bytes:
    """One record, header and payload."""
    return b"%s%s %d\n%s\n" % (MAGIC, sha256.encode(), len(data), data)


def scan_pack(path: Path) -> Iterator[tuple[PackRecord, bytes] | PackError]:
    """Every record of a pack with its payload; a ``PackError`` ends the scan.

    The pack is read one record at a time: a pack is ~1 KB per trial, so reading it
    whole would make sealing or verifying a big run hold all of it in memory.
    """
    yield from _walk(path, payloads=True)


def scan_headers(path: Path) -> Iterator[PackRecord | PackError]:
    """Every record of a pack without its payload (which is skipped, not read)."""
    for item in _walk(path, payloads=False):
        yield item if isinstance(item, PackError) else item[0]


def _walk(path: Path, *, payloads: bool) -> Iterator[tuple[PackRecord, bytes] | PackError]:
    name = path.name
    with open_evidence(path) as handle:
        length = evidence_size(path)
        position = 0
        while position < length:
            header = handle.readline(_HEADER_MAX)
            parts = header[len(MAGIC) : -1].split(b" ")
            if (
                not header.startswith(MAGIC)
                or not header.endswith(b"\n")
                or len(parts) != 2
                or not parts[1].isdigit()
            ):
                yield PackError(name, position)
                return
            size = int(parts[1])
            start = position + len(header)
            if start + size + 1 > length:
                yield PackError(name, position)
                return
            if payloads:
                data = handle.read(size + 1)
            else:
                handle.seek(start + size)
                data = handle.read(1)
            if data[-1:] != b"\n":
                yield PackError(name, position)
                return
            sha = parts[0].decode("ascii", errors="replace")
            yield PackRecord(name, position, start, size, sha), data[:-1] if payloads else b""
            position = start + size + 1


def whole_length(path: Path) -> int:
    """How many leading bytes of a pack are whole records (a crash may tear the last)."""
    end = 0
    for item in scan_headers(path):
        if isinstance(item, PackError):
            return item.header_offset
        end = item.offset + item.size + 1
    return end
