"""Compacted evidence: a sealed run's big files as zstd frames, read as if plain.

While a run is live every file is plain (JSONL, packs), so tailing, resuming and a kill
are as before. When it is sealed, each record file and pack of at least
``compact_threshold()`` bytes is rewritten as ``NAME.zst``: zstd frames of ``FRAME``
uncompressed bytes each, then a seek table in a skippable frame (the zstd *seekable
format*, so ``zstdcat NAME.zst`` prints the file and a reader can jump to a frame). The
plain file is removed only once the ``.zst`` is whole on disk and renamed into place, so
at any instant one of them holds all of the file; if both exist (a kill between the
rename and the removal) the plain one is read, the next resume drops the other and
the next seal rewrites it. Resuming a run expands its compacted files back to plain
ones first: resume cuts torn tails and appends, which plain files make simple, and the
next seal compacts again.

A file's *logical* bytes are its uncompressed bytes: every digest, offset and index
names them, so an auditor can ``zstd -d`` and check the run with plain tools. Readers
call ``open_evidence`` (a seekable binary file over the logical bytes: only the frames
a read touches are decompressed) instead of ``open``, or ``blocks`` to read a whole
file in order (the next frame decompressed on another thread meanwhile).

``ASSAY_COMPACT_BYTES`` (private, for tests) overrides the threshold at seal.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import os
import struct
import threading
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from assay.errors import EvidenceError
from assay.evidence._plain import open_plain

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from assay.evidence._compactor import Compactor

SUFFIX = ".zst"
FRAME = 1 << 20
"""Uncompressed bytes per frame: a lookup decompresses one (about a millisecond)."""
COMPACT_BYTES = 1 << 20
"""Files smaller than this stay plain (nearly every small run: greppable as it is)."""
LEVEL = 1

_SKIPPABLE = 0x184D2A5E
_SEEKABLE = 0x8F92EAB1
_FOOTER = struct.Struct("<IBI")  # number of frames, descriptor, seekable magic
_ENTRY = struct.Struct("<II")  # compressed size, decompressed size
_HEAD = struct.Struct("<II")  # skippable magic, frame size


class FrameError(EvidenceError, ValueError):
    """A ``.zst`` evidence file that is not what its seek table says (torn or edited):
    evidence that does not verify (exit 4) for a command that reads it, and a finding
    naming the file for ``verify`` (which takes any ``ValueError`` as one)."""

    def __init__(self, what: str) -> None:
        super().__init__("evidence.frame", what=what)
        self.what = what


def framed(path: Path) -> Path:
    """Where the compacted form of *path* lives: ``NAME.zst`` beside it."""
    return path.with_name(path.name + SUFFIX)


def compact_threshold() -> int:
    """Plain size from which a file is compacted at seal."""
    value = os.environ.get("ASSAY_COMPACT_BYTES", "")
    return int(value) if value.isdigit() else COMPACT_BYTES


def evidence_exists(path: Path) -> bool:
    """Whether *path* exists, plain or compacted."""
    return path.is_file() or framed(path).is_file()


def open_evidence(path: Path) -> BinaryIO:
    """*path*'s logical bytes as a seekable binary file (``FileNotFoundError`` if it is
    neither plain nor compacted)."""
    try:
        return open_plain(path)
    except FileNotFoundError:
        if not framed(path).is_file():
            raise
    return io.BufferedReader(_FramedRaw(framed(path)), buffer_size=1 << 16)


def evidence_size(path: Path) -> int:
    """How many logical bytes *path* holds."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        if not framed(path).is_file():
            raise
    with open(framed(path), "rb") as handle:
        return _read_table(handle)[0][-1]


def read_evidence(path: Path) -> bytes:
    """All of *path*'s logical bytes (for files known to be small)."""
    with open_evidence(path) as handle:
        return handle.read()


class _FramedRaw(io.RawIOBase):
    """The logical bytes of a ``.zst`` file, decompressing one frame at a time."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        try:
            self._starts, self._offsets = _read_table(self._file)
        except BaseException:
            self._file.close()
            raise
        self._name = path.name
        self._size = self._starts[-1]
        self._position = 0
        self._frame = -1
        self._data = memoryview(b"")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence not in (0, 1, 2):
            raise ValueError(f"whence {whence} is not 0, 1 or 2")
        base = (0, self._position, self._size)[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._position < self._size:
            frame = bisect.bisect_right(self._starts, self._position) - 1
            if frame != self._frame:
                self._load(frame)
            start = self._position - self._starts[frame]
            count = min(len(view) - done, len(self._data) - start)
            view[done : done + count] = self._data[start : start + count]
            done += count
            self._position += count
        return done

    def _load(self, frame: int) -> None:
        self._frame, self._data = -1, memoryview(b"")
        data = _frame(self._file.fileno(), self._name, self._starts, self._offsets, frame)
        self._frame, self._data = frame, memoryview(data)

    def close(self) -> None:
        self._file.close()
        super().close()


def blocks(path: Path) -> Generator[bytes, None, None]:
    """*path*'s logical bytes in order, a block at a time (``FileNotFoundError`` if it
    is neither plain nor compacted): a plain file's ``CHUNK`` bytes at a time, a
    compacted one's frame by frame, each frame decompressed on another thread while
    the caller works on the one before (zstd lets go of the GIL), so a reader of a
    whole file, ``verify`` above all, pays for little more than reading it plain."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        if not framed(path).is_file():
            raise
    else:
        with handle:
            while block := handle.read(CHUNK):
                yield block
        return
    yield from _frames(framed(path))


CHUNK = 1 << 22
"""Bytes read at a time from a plain file by ``blocks``: memory stays flat, and a
reader's split into lines is done in C."""


def _frames(path: Path) -> Generator[bytes, None, None]:
    from concurrent.futures import ThreadPoolExecutor

    with open(path, "rb") as file, ThreadPoolExecutor(1, "assay-frames") as ahead:
        starts, offsets = _read_table(file)
        fd, count = file.fileno(), len(starts) - 1
        pending = ahead.submit(_frame, fd, path.name, starts, offsets, 0) if count else None
        for frame in range(count):
            assert pending is not None  # submitted for every frame
            data = pending.result()
            if frame + 1 < count:
                pending = ahead.submit(_frame, fd, path.name, starts, offsets, frame + 1)
            yield data


def _frame(fd: int, name: str, starts: list[int], offsets: list[int], frame: int) -> bytes:
    """Frame *frame* of the ``.zst`` file open as *fd*, decompressed and checked
    against its seek table (``os.pread``: safe beside another reader of *fd*)."""
    import zstandard

    packed = os.pread(fd, offsets[frame + 1] - offsets[frame], offsets[frame])
    expected = starts[frame + 1] - starts[frame]
    try:  # the size its header claims first: a lying header must not size a buffer
        if zstandard.frame_content_size(packed) != expected:
            raise FrameError(f"{name}: frame {frame} is not what its seek table says")
        data: bytes = zstandard.ZstdDecompressor().decompress(packed, allow_extra_data=False)
    except zstandard.ZstdError as exc:
        raise FrameError(f"{name}: frame {frame} does not decompress ({exc})") from None
    if len(data) != expected:
        raise FrameError(f"{name}: frame {frame} is not what its seek table says")
    return data


def _read_table(handle: BinaryIO) -> tuple[list[int], list[int]]:
    """The seek table at the end of a ``.zst`` file: each frame's logical start (and
    the total size), each frame's compressed offset (and where the table begins)."""
    name = getattr(handle, "name", "?")
    length = os.fstat(handle.fileno()).st_size
    if length < _HEAD.size + _FOOTER.size:
        raise FrameError(f"{name}: too short for a seek table")
    handle.seek(length - _FOOTER.size)
    count, descriptor, magic = _FOOTER.unpack(handle.read(_FOOTER.size))
    table = _HEAD.size + count * _ENTRY.size + _FOOTER.size
    if magic != _SEEKABLE or descriptor != 0 or table > length:
        raise FrameError(f"{name}: no seek table at its end")
    handle.seek(length - table)
    head = _HEAD.unpack(handle.read(_HEAD.size))
    if head != (_SKIPPABLE, table - _HEAD.size):
        raise FrameError(f"{name}: no seek table at its end")
    entries = handle.read(count * _ENTRY.size)
    starts, offsets = [0], [0]
    for packed, plain in _ENTRY.iter_unpack(entries):
        starts.append(starts[-1] + plain)
        offsets.append(offsets[-1] + packed)
    if offsets[-1] != length - table:
        raise FrameError(f"{name}: the seek table does not cover the file")
    return starts, offsets


def compact(
    path: Path, threshold: int, frame: int = FRAME, workers: Executor | None = None
) -> bool:
    """Compact *path* if it is at least *threshold* bytes: write ``NAME.zst`` whole
    (temporary name, fsync, rename), then remove the plain file. *frame*: uncompressed
    bytes per frame (tests make small ones, so records and lines straddle frames).
    *workers*: threads to compress on (``AHEAD`` of them), else some are started."""
    try:
        if path.stat().st_size < threshold:
            return False
    except FileNotFoundError:
        return False
    target = framed(path)
    temp = target.with_name(f".{target.name}.tmp")
    entries = bytearray()
    try:
        with open(path, "rb") as source, open(temp, "wb") as out:
            for plain, packed in _compressed(source, frame, workers):
                out.write(packed)
                entries += table_entry(len(packed), plain)
            out.write(seek_table(bytes(entries)))
            out.flush()
            os.fsync(out.fileno())
    except OSError:  # a full disk, say: the plain file is whole, and evidence as it is
        temp.unlink(missing_ok=True)
        return False
    os.replace(temp, target)
    path.unlink()
    return True


AHEAD = 2
"""Frames compressed at once by ``compact`` (zstd lets go of the GIL): sealing a big
run takes about half the time on two cores. Each frame is compressed on its own with
the same settings, so the file's bytes are those one thread would write."""


def _compressed(
    source: BinaryIO, frame: int, workers: Executor | None
) -> Generator[tuple[int, bytes], None, None]:
    """``(plain size, zstd frame)`` of each *frame* bytes of *source*, in order, up to
    ``AHEAD`` of them compressed at once on *workers* (or threads started here)."""
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    pending: deque[tuple[int, Future[bytes]]] = deque()
    with contextlib.nullcontext(workers) if workers else ThreadPoolExecutor(AHEAD) as pool:
        try:
            while block := source.read(frame):
                pending.append((len(block), pool.submit(_compress, block)))
                if len(pending) >= AHEAD:
                    size, packed = pending.popleft()
                    yield size, packed.result()
            while pending:
                size, packed = pending.popleft()
                yield size, packed.result()
        finally:
            for _, future in pending:
                future.cancel()


def _compress(block: bytes) -> bytes:
    """One frame, by this thread's compressor: one may not be shared between threads,
    and making one a frame cost about 1 % of compressing it (each ``compress`` starts
    afresh, so the bytes are a new compressor's)."""
    compressor = getattr(_compressors, "zstd", None)
    if compressor is None:
        import zstandard

        compressor = _compressors.zstd = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    packed: bytes = compressor.compress(block)
    return packed


_compressors = threading.local()
"""Each thread's ``ZstdCompressor`` (``_compress``)."""


def table_entry(packed: int, plain: int) -> bytes:
    """A frame's entry in the seek table: its compressed and uncompressed sizes."""
    return _ENTRY.pack(packed, plain)


def seek_table(entries: bytes) -> bytes:
    """The skippable frame that ends a ``.zst`` file: the frames' *entries*, then the
    footer."""
    table = entries + _FOOTER.pack(len(entries) // _ENTRY.size, 0, _SEEKABLE)
    return _HEAD.pack(_SKIPPABLE, len(table)) + table


def compacted_names(run: Path) -> list[str]:
    """The files of the run at *run* that are compacted at seal (when big enough):
    its record files and packs, by their plain names."""
    from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, PLAN, SCORES
    from assay.evidence._pack import pack_names

    return [
        *(PLAN, EVENTS, BUNDLES, SCORES),
        *(f"{ARTIFACTS}/{n}" for n in pack_names(run / ARTIFACTS)),
    ]


def compact_run(run: Path, ahead: Compactor | None = None, pool: Executor | None = None) -> None:
    """Compact the sealed run at *run*: its record files and packs of at least
    ``compact_threshold()`` bytes (the indexes stay plain: a lookup maps them).
    *ahead*: what compacted their frames while the run went on (it is finished here).
    *pool*: threads to compress and sync on (``AHEAD`` at least), else started here."""
    from concurrent.futures import ThreadPoolExecutor

    threshold = compact_threshold()
    with contextlib.ExitStack() as stack:  # threads started once for all the files
        workers = pool or stack.enter_context(ThreadPoolExecutor(AHEAD, "assay-compact"))
        done = ahead.finish(threshold, workers) if ahead is not None else set()
        for name in compacted_names(run):
            if name not in done:
                compact(run / name, threshold, workers=workers)


def expand_run(run: Path) -> list[str]:
    """Make every compacted file of *run* plain again; the names of those expanded."""
    from assay.evidence._layout import ARTIFACTS, BUNDLES, EVENTS, PLAN, SCORES
    from assay.evidence._pack import pack_names

    names = [
        *(PLAN, EVENTS, BUNDLES, SCORES),
        *(f"{ARTIFACTS}/{n}" for n in pack_names(run / ARTIFACTS)),
    ]
    return [name for name in names if expand(run / name)]


def expand(path: Path) -> bool:
    """Make *path* plain again (a resumed run appends to it): from ``NAME.zst`` if
    there is no plain file; a ``.zst`` beside a plain file (a kill while compacting) is
    dropped, the plain file being whole."""
    target = framed(path)
    if not target.is_file():
        return False
    if path.is_file():
        target.unlink()
        return True
    temp = path.with_name(f".{path.name}.tmp")
    with open_evidence(path) as source, open(temp, "wb") as out:
        while block := source.read(1 << 22):
            out.write(block)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, path)
    target.unlink()
    return True
