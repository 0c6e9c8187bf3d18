"""Compaction ahead: a live run's big files compressed frame by frame while it runs.

Why: sealing a run compacts its record files and packs (``_framed.compact_run``), and
hashes its record files for the manifest. At 5,000 samples that is about 55 ms of CPU
after the last answer, at 100,000 about 1.2 s: time the run's rate pays for. But the
files only grow, and each frame is compressed on its own, so a frame is final as soon
as the run has written past it. A thread compresses each whole frame as it appears
(zstd lets go of the GIL: on the core the run's one thread leaves idle) into the file's
``.NAME.zst.tmp`` and hashes it on the way; the seal is left each file's last frame.
The ``.zst`` bytes are those ``compact`` writes, and the digests those of the files.

Crash-safety is ``compact``'s: the plain file stays whole until the ``.zst`` is whole
on disk (fsync) and renamed into place; a kill leaves a temporary file, which the next
resume removes, as a kill while sealing does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from assay.evidence._durable import at_once
from assay.evidence._framed import (
    FRAME,
    _compress,
    _compressed,
    compacted_names,
    framed,
    seek_table,
    table_entry,
)
from assay.evidence._layout import BUNDLES, PLAN, SCORES

if TYPE_CHECKING:
    from concurrent.futures import Executor

DIGESTED = (PLAN, BUNDLES, SCORES)
"""The files the manifest lists by digest: hashed as they are compressed (the events
and packs are checked otherwise, by their chain and their records' digests)."""


class _Ahead:
    """One file being compacted: where it is read from, what is written so far."""

    __slots__ = ("done", "entries", "hasher", "out", "path", "source", "temp")

    def __init__(self, path: Path, hashed: bool) -> None:
        self.path = path
        self.temp = _temp_of(path)
        self.source: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self.out: BinaryIO = open(self.temp, "wb")  # noqa: SIM115 - closed by close()
        except BaseException:
            self.source.close()
            raise
        self.done = 0  # plain bytes compressed (and hashed) so far: whole frames
        self.entries = bytearray()
        self.hasher = hashlib.sha256() if hashed else None  # only what the manifest digests

    def add(self, plain: bytes, packed: bytes) -> None:
        self.out.write(packed)
        self.out.flush()  # on disk as it goes (the page cache writes it back meanwhile)
        self.entries += table_entry(len(packed), len(plain))
        if self.hasher is not None:
            self.hasher.update(plain)
        self.done += len(plain)

    def close(self) -> None:
        try:
            self.out.close()
        finally:
            self.source.close()


class Compactor:
    """Compacts the whole frames of the run at *run*'s files ahead of its seal, on a
    thread woken by ``poke`` (the run's writer pokes it as it flushes); ``finish`` at
    the seal, or ``discard``."""

    def __init__(self, run: Path, frame: int = FRAME) -> None:
        self._run = run
        self._frame = frame
        self._files: dict[str, _Ahead] = {}
        self._wake = threading.Event()
        self._stopping = False
        self._broken = False
        self._thread: threading.Thread | None = threading.Thread(
            target=self._work, name="assay-compact-ahead", daemon=True
        )
        self._thread.start()

    def poke(self) -> None:
        """More bytes were flushed: compress the frames they complete."""
        self._wake.set()

    def digest(self, name: str) -> str | None:
        """The SHA-256 (hex) of the file *name* as it is now, from the frames hashed
        ahead and the rest read here; None if it was not compacted ahead. Stops the
        thread: the files are final when the seal asks."""
        self.stop()
        state = self._files.get(name)
        if state is None or state.hasher is None:
            return None
        hasher = state.hasher.copy()
        offset = state.done
        while chunk := os.pread(state.source.fileno(), 1 << 20, offset):
            hasher.update(chunk)
            offset += len(chunk)
        return hasher.hexdigest()

    def finish(self, threshold: int, workers: Executor) -> set[str]:
        """Compact, as ``compact`` would, each file ahead of *threshold* bytes or more:
        its last frames on *workers* and the seek table; then every such ``.zst`` is
        synced, the fsyncs together (one journal commit, not one a file); then each is
        renamed into place and its plain file removed. Each file's ``.zst`` is on disk
        before its rename, as with ``compact``; the files do not depend on each other.
        The names of the files it took care of (compacted or left plain)."""
        self.stop()
        if self._broken:  # a frame may be half written: the seal compacts every file
            self.discard()
            return set()
        states, self._files = self._files, {}
        sealed: list[_Ahead] = []
        try:
            for state in states.values():
                with contextlib.suppress(OSError):  # a full disk: the plain file stays
                    if _seal_file(state, threshold, self._frame, workers):
                        sealed.append(state)
            synced = _synced(sealed, workers)
        finally:
            for state in states.values():
                state.close()
        for state in states.values():
            if state in synced:
                os.replace(state.temp, framed(state.path))
                state.path.unlink()
            else:
                state.temp.unlink(missing_ok=True)
        return set(states)

    def discard(self) -> None:
        """Stop and remove what was written ahead (the run is not being sealed)."""
        self.stop()
        for state in self._files.values():
            with contextlib.suppress(OSError):
                state.close()
            state.temp.unlink(missing_ok=True)
        self._files.clear()

    def stop(self) -> None:
        """Stop the thread (once the frame it is on is written)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stopping = True
            self._wake.set()
            thread.join()

    def _work(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            try:
                for name in compacted_names(self._run):
                    while not self._stopping and self._next_frame(name):
                        pass
            except Exception:  # an unreadable file, a full disk: the seal compacts it all
                self._broken = True
                return

    def _next_frame(self, name: str) -> bool:
        """Compress the next whole frame of *name*, if there is one now."""
        state = self._files.get(name)
        if state is None:
            path = self._run / name
            try:
                if path.stat().st_size < self._frame:
                    return False
            except FileNotFoundError:
                return False
            state = self._files[name] = _Ahead(path, name in DIGESTED)
        block = os.pread(state.source.fileno(), self._frame, state.done)
        if len(block) < self._frame:
            return False
        state.add(block, _compress(block))
        return True

    @property
    def broken(self) -> bool:
        """Whether the thread stopped on an error (the seal then compacts the rest)."""
        return self._broken


def _seal_file(state: _Ahead, threshold: int, frame: int, workers: Executor) -> bool:
    """Write the rest of *state*'s file and its seek table (not synced yet); False if
    it stays plain."""
    if os.fstat(state.source.fileno()).st_size < threshold:
        return False
    state.source.seek(state.done)
    for plain, packed in _compressed(state.source, frame, workers):
        state.out.write(packed)
        state.entries += table_entry(len(packed), plain)
    state.out.write(seek_table(bytes(state.entries)))
    state.out.flush()
    return True


def _synced(states: list[_Ahead], workers: Executor) -> list[_Ahead]:
    """The *states* whose ``.zst`` reached the disk: their fsyncs issued together. One
    that failed (a full disk, say) stays plain, as a failed write does."""
    if not states:
        return []
    failed: list[_Ahead] = []

    def sync(state: _Ahead) -> None:
        try:
            os.fsync(state.out.fileno())
        except OSError:
            failed.append(state)

    at_once(sync, states, workers)
    return [state for state in states if state not in failed]


def _temp_of(path: Path) -> Path:
    target = framed(path)
    return target.with_name(f".{target.name}.tmp")
