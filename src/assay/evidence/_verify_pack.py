"""Verify's pass over a pack file: every record hashed against its header, fast.

``scan_pack`` reads a record at a time and builds a ``PackRecord`` for each, which is
what sealing and resuming want; verify only needs each payload's SHA-256 compared with
its header's, so it walks the mapped file with ``find`` and hashes memoryview slices
(no copies, no objects per record). The record format and what counts as a broken
record are ``_pack``'s, checked here the same way. ``scan`` is the whole pack pass: the
pack worker imports this module alone, so it imports nothing that needs msgspec.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evidence._framed import FrameError, blocks, framed
from assay.evidence._layout import ARTIFACTS
from assay.evidence._pack_format import HEADER_MAX, MAGIC, pack_names

if TYPE_CHECKING:  # not imported: the pack worker does without msgspec
    from assay.evidence._verify_refs import DigestSet

_NEWLINE = ord("\n")


Mismatch = tuple[int, str, str]  # header offset, sha256 in the header, sha256 of the payload
Finding = tuple[str, str, dict[str, Any]]  # where, catalog key, parameters


Scanned = tuple[bytes, int, list[Finding], dict[str, str | None]]
"""The pack pass's answer: the raw sha256 of each record that matches its header, end to
end; how many records; findings in pack order; the digests of the files asked for."""


def scan(run: str, files: Sequence[str] = ()) -> Scanned:
    """Hash every record of every pack of the run at *run*, and the files *files* of it
    whole; evidence so damaged that it cannot be read ends the pass with a
    ``verify.unreadable`` finding, not a crash."""
    digests = {name: file_digest(Path(run) / name) for name in files}
    root = Path(run) / ARTIFACTS
    found, findings, count = bytearray(), list[Finding](), 0
    try:
        for name in pack_names(root) if root.is_dir() else []:
            bad: list[Mismatch] = []
            try:
                records, broken = hash_pack(root / name, found, bad)
            except FrameError as exc:
                where = f"{ARTIFACTS}/{name}"
                findings.append((where, "verify.unreadable", {"reason": exc.what[:200]}))
                continue
            count += records
            for offset, sha, actual in bad:
                where = f"{ARTIFACTS}/{name}@{offset} ({sha})"
                findings.append((where, "verify.artifact", {"actual": actual}))
            if broken is not None:
                where = f"{ARTIFACTS}/{name}@{broken}"
                findings.append((where, "verify.not_record", {"kind": "artifact"}))
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        reason = f"{type(exc).__name__}: {exc}"[:200]
        findings.append((ARTIFACTS, "verify.unreadable", {"reason": reason}))
    return bytes(found), count, findings, digests


def file_digest(path: Path) -> str | None:
    """``sha256:<hex>`` of the file at *path*, None if there is none."""
    try:
        digest = hashlib.sha256()
        for block in blocks(path):
            digest.update(block)
        return "sha256:" + digest.hexdigest()
    except FileNotFoundError:
        return None
    except FrameError as exc:
        return f"unreadable ({exc.what})"
    except OSError as exc:  # a folder where a file belongs, say: it cannot match
        return f"unreadable ({type(exc).__name__})"


def hash_pack(
    path: Path, good: DigestSet | bytearray, bad: list[Mismatch]
) -> tuple[int, int | None]:
    """Hash every record of the pack at *path*.

    Adds the sha256 (raw bytes) of each record whose payload matches its header to *good*
    (a ``DigestSet``, or a ``bytearray`` they are appended to end to end) and appends each
    one that does not to *bad*. Returns how many records were hashed and
    the offset of the first record that is not a whole record (the walk stops there),
    or None when the pack is whole.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        if not framed(path).is_file():
            raise
        return _hash_framed(path, good, bad)
    with handle:
        length = os.fstat(handle.fileno()).st_size
        if length == 0:
            return 0, None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            view = memoryview(data)
            try:
                found = bytearray()
                records, position, _ = _walk(data, view, length, found, bad)
                good.extend(found)
                return records, position
            finally:
                view.release()


def _hash_framed(
    path: Path, good: DigestSet | bytearray, bad: list[Mismatch]
) -> tuple[int, int | None]:
    """``hash_pack`` of a compacted pack: its logical bytes a few MiB at a time, a
    record split between two blocks carried over (records are under 64 KiB)."""
    records, base, rest = 0, 0, b""
    read = blocks(path)
    try:
        while True:
            block = next(read, b"")
            data = rest + block if rest else block
            view = memoryview(data)
            found = bytearray()  # this block's: a few MiB of records, 32 bytes each
            count, position, more = _walk(data, view, len(data), found, bad, base, final=not block)
            good.extend(found)
            view.release()
            records += count
            if not more or position is None:
                return records, position
            base, rest = base + position, data[position:]
    finally:
        read.close()


def _walk(
    data: mmap.mmap | bytes,
    view: memoryview,
    length: int,
    good: bytearray,
    bad: list[Mismatch],
    base: int = 0,
    *,
    final: bool = True,
) -> tuple[int, int | None, bool]:
    """Hash the records of *data* (which starts at offset *base* of the pack). Returns
    how many, where the walk stopped (None: at the end) and whether it stopped only
    for want of the bytes after *data* (never when *final*)."""
    position, magic, sha256, find = 0, len(MAGIC), hashlib.sha256, data.find
    records = 0
    while position < length:
        end = find(b"\n", position, position + HEADER_MAX)
        if end < 0 and not final and position + HEADER_MAX > length:
            return records, position, True
        if end < 0 or data[position : position + magic] != MAGIC:
            return records, base + position, False
        parts = data[position + magic : end].split(b" ")
        if len(parts) != 2 or not parts[1].isdigit():
            return records, base + position, False
        start = end + 1
        stop = start + int(parts[1])
        if stop + 1 > length and not final:
            return records, position, True
        if stop + 1 > length or data[stop] != _NEWLINE:
            return records, base + position, False
        actual = sha256(view[start:stop]).digest()
        records += 1
        if actual.hex().encode() == parts[0]:
            good += actual  # packed: one bytearray append, no call per record
        else:
            header = parts[0].decode("ascii", errors="replace")
            bad.append((base + position, header, actual.hex()))
        position = stop + 1
    return records, None if final else position, not final
