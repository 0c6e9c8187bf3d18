"""The pack pass of ``verify``: every artifact record hashed against its header, in a
process of its own for a large run (``_verify_packs_worker``), so that the verifying
process, the event pass and this one share the two cores (at 100,000 trials: 400,000
records, about 1 s of CPU that the verifying process no longer spends).

It needs nothing but the packs and returns plain data: the raw sha256 of every record
that matches its header (packed, 32 bytes each), and what did not. It also hashes the
files whose whole digests the manifest lists and no other pass reads (indexes, reports:
~22 MB at 100,000 trials), which the event pass did before: this pass is the shorter.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from assay._messages import say
from assay.evidence._framed import evidence_size
from assay.evidence._layout import ARTIFACTS
from assay.evidence._pack import pack_names
from assay.evidence._verify_events import start_worker
from assay.evidence._verify_pack import Finding, Scanned, scan

if TYPE_CHECKING:
    import subprocess

PACK_NICENESS = 3  # the pack worker's niceness (see ``_yield_to_the_event_pass``)


class PackScan(msgspec.Struct):
    """What the pack pass found (msgpack-able: it crosses a process boundary)."""

    good: bytes = b""  # raw sha256 of each record that matches its header, end to end
    records: int = 0
    findings: list[Finding] = []  # in pack order, as ``check_artifacts`` words them
    file_digests: dict[str, str | None] = {}  # name → "sha256:…" (None: no such file)
    in_worker: bool = False  # set by ``finish_packs``: this answer came from a worker process
    fallback: str = ""  # set by ``finish_packs``: why a worker's answer was not used


def scan_packs(run: str, files: Sequence[str] = ()) -> PackScan:
    """Hash every record of every pack of the run at *run*, and the files *files* of it
    whole (``_verify_pack.scan``, here)."""
    return PackScan(*scan(run, files))


def packs_apart(path: Path, threshold: int) -> bool:
    """Whether the pack pass is to run in a process of its own: the packs are large
    and a second core is there (as for the event pass)."""
    root = path / ARTIFACTS
    try:
        size = sum(evidence_size(root / name) for name in pack_names(root))
    except OSError:
        return False
    return size >= threshold and (os.cpu_count() or 1) >= 2


def start_packs(
    path: Path, threshold: int, files: Sequence[str] = ()
) -> subprocess.Popen[bytes] | str | None:
    """Start the pack pass (and the digests of *files*) in a fresh process if
    ``packs_apart``; None: it runs here."""
    return start_pack_worker(path, files) if packs_apart(path, threshold) else None


def start_pack_worker(path: Path, files: Sequence[str] = ()) -> subprocess.Popen[bytes] | str:
    """The pack pass's process, started (a string: why it could not start)."""
    worker = start_worker("assay.evidence._verify_packs_worker", [str(path), *files])
    if not isinstance(worker, str):
        _yield_to_the_event_pass(worker.pid)
    return worker


def _yield_to_the_event_pass(pid: int) -> None:
    """Lower the pack worker's priority a little: on two cores three processes share
    them, and the pack pass is the shortest and awaited last. Since events are batched
    the event pass is about as long as this process's own checks, so a pack worker
    niced 10 was left waiting until they ended and became the last to finish; at 3 it
    runs beside them (100k run, 9 interleaved runs each: medians 2.04 s at 10, 2.00 s
    at 0, 1.97 s at 3)."""
    with contextlib.suppress(OSError, AttributeError):  # not allowed, or not POSIX
        niceness = min(19, os.getpriority(os.PRIO_PROCESS, 0) + PACK_NICENESS)
        os.setpriority(os.PRIO_PROCESS, pid, niceness)


def finish_packs(
    path: Path, worker: subprocess.Popen[bytes] | str | None, files: Sequence[str] = ()
) -> PackScan:
    """The worker's pack pass, or this process's if there is none or it failed (the
    reason kept in ``fallback``: verify says the pass was redone here); *files* as
    given to ``start_packs``."""
    if worker is None:
        return scan_packs(str(path), files)
    reason = worker if isinstance(worker, str) else ""
    if not reason:
        assert not isinstance(worker, str)
        out, _ = worker.communicate()
        if worker.returncode != 0:
            reason = say("verify.worker_exit", code=worker.returncode)
        else:
            try:
                good, records, found, digests = msgspec.convert(marshal.loads(out), type=Scanned)
                return PackScan(good, records, found, digests, in_worker=True)
            except (msgspec.ValidationError, ValueError, EOFError, TypeError) as exc:
                reason = say("verify.worker_answer", reason=str(exc)[:200])
    scan = scan_packs(str(path), files)
    scan.fallback = reason
    return scan
