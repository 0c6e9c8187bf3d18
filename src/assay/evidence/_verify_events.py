"""The event-chain pass of ``verify``, on its own so it can run on another core.

It needs nothing but ``events.jsonl`` (and the names of the files whose whole digests the
manifest lists, hashed here too because nothing else needs them) and returns plain data:
findings as catalog keys with their parameters, the chain's head, each trial's folded
event hashes, the score lines that ``match`` events bind, the files' digests. The same
function runs in the verifying process for a small run and in a worker process for a
large one, so both give the same answer.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

import assay
from assay._digest import loads
from assay._messages import say
from assay.evidence._framed import FrameError, blocks, evidence_size
from assay.evidence._layout import EVENTS
from assay.evidence._log import BATCH, GENESIS
from assay.evidence._verify_batch import (
    BatchLine,
    MatchLine,
    check_batch,
    check_events,
    decode_line,
    decode_match,
    numbering,
)
from assay.evidence._verify_pack import Finding, file_digest
from assay.evidence._verify_refs import (
    REFERRING,
    RefBuilder,
    RefList,
    event_refs,
    packed_digests,
)

if TYPE_CHECKING:
    import subprocess
    from _hashlib import HASH as Hash


class EventScan(msgspec.Struct):
    """What the event pass found (picklable: it crosses a process boundary)."""

    findings: list[Finding]
    events: int = 0  # lines (the manifest's count)
    batched: int = 0  # events in batch lines beyond one a line: lines + batched = events
    head: str = GENESIS
    # per trial, sha256 of ``fold_start(trial)`` + [[n, hash], ...] of its events;
    # and the sha256 of each score line a ``match`` binds: 32 raw bytes each, end to end
    # (one msgpack binary to cross from the worker, not 200,000 objects)
    folds: bytes = b""
    score_hashes: bytes = b""
    run_tail: tuple[str, Any] = ("", {})  # the last run-level event: kind, data
    sequential: list[tuple[int, str, Any]] = []  # line, kind, data of looks and stops
    readable: bool = True  # False: a record of the wrong shape stopped the pass
    file_digests: dict[str, str | None] = {}  # name → "sha256:…" (None: no such file)
    refs: RefList = msgspec.field(default_factory=RefList)  # what events' data name (packed)
    in_worker: bool = False  # set by ``finish_scan``: this answer came from a worker process
    fallback: str = ""  # set by ``finish_scan``: why a worker's answer was not used


def line_chunks(
    path: Path, name: str, findings: list[Finding], whole: Hash | None = None
) -> Iterator[list[bytes]]:
    """The lines of *path* without their newlines, a few MiB at a time.

    A last line without a newline (a torn write) is yielded too, after a ``verify.torn``
    finding; a missing file is a ``verify.missing`` finding and no lines. *whole*, if
    given, is fed every byte read, so the file's digest needs no second read.
    """
    read = blocks(path)
    number, rest = 0, b""
    try:
        while block := _next(read, name, findings):
            if whole is not None:
                whole.update(block)
            lines = block.split(b"\n")
            if rest:  # the line begun in the block before (joined alone, not the block)
                lines[0] = rest + lines[0]
            rest = lines.pop()
            number += len(lines)
            if lines:
                yield lines
    finally:
        read.close()  # a compacted file's read-ahead thread ends with it
    if rest:
        findings.append((f"{name}:{number + 1}", "verify.torn", {}))
        yield [rest]


def _next(read: Iterator[bytes], name: str, findings: list[Finding]) -> bytes:
    """The next block of *read* (``b""`` at its end). A missing file is a finding, and
    so is a compacted one whose frames do not match its seek table (it ends there)."""
    try:
        return next(read, b"")
    except FileNotFoundError:
        findings.append((name, "verify.missing", {}))
    except FrameError as exc:
        findings.append((name, "verify.unreadable", {"reason": exc.what[:200]}))
    return b""


class _EventHead(msgspec.Struct, gc=False):
    """The fields verify needs of an event line; ``data`` stays undecoded unless used
    (``gc=False``: it holds no containers, so the collector need not track 600,000)."""

    prev: str
    trial: str | None
    n: int
    parent: int | None
    type: str
    data: msgspec.Raw


_decode_head = msgspec.json.Decoder(_EventHead).decode
SEQUENTIAL_EVENTS = frozenset({"look", "stopped", "not_run"})
"""The run-level events of a sequential gate, which verify re-derives from the scores."""


def scan_events(run: str, files: Sequence[str] = ()) -> EventScan:
    """The event pass, and the digests of *files*; evidence so damaged that it cannot be
    read (a ``match`` whose data is not an object, say) ends the event pass with a
    ``verify.unreadable`` finding, not a crash."""
    scan = EventScan(findings=[])
    scan.file_digests = {name: file_digest(Path(run) / name) for name in files}
    running: dict[str | None, list[Any]] = {}  # trial → [its last n, its fold or None]
    refs, bound = RefBuilder(), bytearray()
    try:
        _walk(run, scan, running, refs, bound)
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        reason = f"{type(exc).__name__}: {exc}"[:200]
        scan.findings.append((EVENTS, "verify.unreadable", {"reason": reason}))
        scan.readable, scan.events = False, 0
    scan.refs, scan.score_hashes = refs.done(), bytes(bound)
    folds = bytearray()
    for trial, (_, fold) in running.items():
        if fold is not None and trial is not None:  # a trial with no folded event has none
            fold.update(b"]")
            folds += fold.digest()
    scan.folds = bytes(folds)
    return scan


def fold_start(trial: str) -> bytes:
    """What a trial's event list is hashed after, in ``EventScan.folds``: its id, its
    length first (no id and list can then spell another id and list)."""
    data = trial.encode()
    return b"%d:" % len(data) + data


def fold_key(trial: str, listed: bytes) -> bytes:
    """What ``EventScan.folds`` holds for *trial* whose events are *listed* (the
    canonical JSON ``[[n, "event hash"], ...]`` a bundle has): one SHA-256 of both."""
    return hashlib.sha256(fold_start(trial) + listed).digest()


def _walk(
    run: str,
    scan: EventScan,
    running: dict[str | None, list[Any]],
    refs: RefBuilder,
    bound: bytearray,
) -> None:
    """Walk the chain link by link (the hot loop of verify: kept flat on purpose, the
    common kinds first; each trial's count and fold in one small list, one lookup).

    A batch or ``match`` line of the usual shape is decoded whole at once
    (``decode_line``); any other line is read as an ``_EventHead`` and its data when
    needed, which is what finds what is wrong with a line the first way cannot read."""
    findings = scan.findings
    prev = GENESIS
    referring = REFERRING
    sha256 = hashlib.sha256
    fast, match_line, decode_error = decode_line, MatchLine, msgspec.DecodeError
    number = batched = 0
    records: list[Any] = []  # what this block's ``match`` lines bind (packed per block)
    try:
        for lines in line_chunks(Path(run) / EVENTS, EVENTS, findings):
            if records:
                bound += packed_digests(records)
                records.clear()
            for line in lines:
                number += 1
                try:
                    head: Any = fast(line)
                except decode_error:
                    head = None
                if head is not None and head.trial is not None:  # a trial's batch or match
                    kind = BATCH if type(head) is BatchLine else "match"
                else:
                    try:
                        head = _decode_head(line)
                    except decode_error:
                        where = f"{EVENTS}:{number}"
                        findings.append((where, "verify.not_record", {"kind": "event"}))
                        prev = sha256(line).hexdigest()
                        continue
                    kind = head.type
                if head.prev != prev:
                    findings.append(
                        (f"{EVENTS}:{number}", "verify.chain", {"previous": number - 1})
                    )
                prev = sha256(line).hexdigest()
                trial = head.trial
                n = head.n
                seen = running.get(trial)
                if seen is None:
                    seen = running[trial] = [0, None]
                if kind == BATCH:  # a trial's events up to its bundle, checked one by one
                    if type(head) is BatchLine:
                        count = check_events(number, head, head.data.events, seen, refs, findings)
                    else:
                        count = check_batch(number, head, seen, refs, findings)
                    batched += count - 1
                    if trial is None:
                        continue
                else:
                    parent = head.parent
                    if n != seen[0] + 1 or parent is None or not 0 < parent < n:
                        numbering(number, trial, n, parent, kind, seen[0], findings)
                    seen[0] = n
                    if trial is None:
                        scan.run_tail = (kind, loads(head.data))
                        if kind in SEQUENTIAL_EVENTS:
                            scan.sequential.append((number, kind, scan.run_tail[1]))
                        continue
                    if kind in referring:
                        event_refs(number, head.data, refs)
                        if kind.startswith("score_"):  # what scorers did
                            continue
                    elif kind == "match":  # after the sealed bundle: it binds its score line
                        data = head.data if type(head) is match_line else decode_match(head.data)
                        records.append(data.record)  # packed if a sha256 (else no line's hash)
                        continue
                    elif kind.startswith("score_"):  # what scorers did (_log.after_seal, inlined)
                        continue
                    elif kind == "sampling" and b'"model"' in line:
                        event_refs(number, head.data, refs)
                fold = seen[1]
                if fold is None:  # the canonical JSON of [[n, hash], ...], as a bundle has it
                    seen[1] = sha256(fold_start(trial) + f'[[{n},"{prev}"]'.encode())
                else:
                    fold.update(f',[{n},"{prev}"]'.encode())
    finally:  # what was bound before a line that could not be read counts too
        bound += packed_digests(records)
    scan.events, scan.head, scan.batched = number, prev, batched


def start_scan(
    path: Path, threshold: int, files: Sequence[str] = ()
) -> subprocess.Popen[bytes] | str | None:
    """Start the event pass in a fresh process if the log is large and a second core is
    there; None means it runs here (small runs: a process costs more than it saves), a
    string why a worker was wanted but could not start (``finish_scan`` reports it).

    The worker is ``python -P -m assay.evidence._verify_worker``, not a
    ``multiprocessing`` child, which would re-run the caller's main script. It is given
    only the folders assay and msgspec were imported from (``worker_path``), not this
    process's whole ``sys.path``: a folder there holding a ``numbers.py`` would shadow the
    standard module in the worker, and ``-P`` keeps the current folder off its path too.
    """
    try:
        size = evidence_size(path / EVENTS)
    except OSError:
        return None
    if size < threshold or (os.cpu_count() or 1) < 2:
        return None
    return start_worker("assay.evidence._verify_worker", [str(path), *files])


def start_worker(module: str, args: list[str]) -> subprocess.Popen[bytes] | str:
    """``python -P -m module args...`` with its answer on a pipe; a string why it could
    not start (see ``start_scan``)."""
    import subprocess  # here: ``import assay`` stays light

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(worker_path())}
    try:
        return subprocess.Popen(
            [sys.executable, "-P", "-m", module, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError as exc:
        return say("verify.worker_start", reason=f"{type(exc).__name__}: {exc}"[:200])


def worker_path() -> list[str]:
    """The worker's ``PYTHONPATH``: the folders assay and msgspec came from, unless the
    interpreter finds them by itself (site-packages, which must not go ahead of the
    standard library), then the ``PYTHONPATH`` this process was started with."""
    import site

    found_anyway = {os.path.realpath(p) for p in site.getsitepackages()}
    found_anyway.add(os.path.realpath(site.getusersitepackages()))
    path: list[str] = []
    for module in (assay, msgspec):
        root = os.path.dirname(os.path.dirname(module.__file__ or ""))
        if root and os.path.realpath(root) not in found_anyway and root not in path:
            path.append(root)
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and entry not in path:
            path.append(entry)
    return path


def finish_scan(
    path: Path, worker: subprocess.Popen[bytes] | str | None, files: Sequence[str] = ()
) -> EventScan:
    """The worker's event pass (``in_worker`` set), or this process's if there is none or
    it failed; a failed worker's reason is kept in ``fallback`` so verify can say the pass
    was redone here instead of hiding it (the answer is the same function's either way)."""
    if worker is None:
        return scan_events(str(path), files)
    if isinstance(worker, str):
        return _redone_here(path, files, worker)
    out, _ = worker.communicate()
    if worker.returncode != 0:
        return _redone_here(path, files, say("verify.worker_exit", code=worker.returncode))
    try:
        scan = msgspec.msgpack.decode(out, type=EventScan)
    except msgspec.DecodeError as exc:
        return _redone_here(path, files, say("verify.worker_answer", reason=str(exc)[:200]))
    scan.in_worker = True
    return scan


def _redone_here(path: Path, files: Sequence[str], reason: str) -> EventScan:
    """This process's event pass, noting why the worker's was not used."""
    scan = scan_events(str(path), files)
    scan.fallback = reason
    return scan


def stop_scan(worker: subprocess.Popen[bytes] | str | None) -> None:
    """End a worker whose answer is no longer wanted (verify was interrupted)."""
    if worker is not None and not isinstance(worker, str) and worker.poll() is None:
        worker.kill()
        worker.wait()
