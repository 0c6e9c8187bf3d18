"""The append-only event log: one JSON record a line, each chained to the one before.

Every record carries ``prev``, the SHA-256 of the previous line's bytes (the first
carries 64 zeros), so editing, inserting, dropping or reordering any record breaks the
chain at that point; the manifest pins the last hash, so cutting the tail is caught too.
Records are numbered within their trial (``n``) and name their parent's number.

A trial's events up to its bundle are written in batches: one line of type ``events``
whose data lists them (``events_in`` gives them back), so a trivial trial costs one
encode, one SHA-256 and one write instead of six. Readers go through ``events_in``, which
reads a run written one event a line (before batches) the same way.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any, Protocol

import msgspec

from assay._digest import fast_json

_sha256 = hashlib.sha256  # append_held's, bound once (two lines a trial)

GENESIS = "0" * 64
BATCH = "events"
"""The type of a line holding a batch of a trial's events (``data.events``); the line's
``n`` is its last event's, its ``parent`` null."""


def events_in(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The events a line of ``events.jsonl`` holds, each shaped as a line (``trial``,
    ``n``, ``parent``, ``type``, ``at``, ``data``): a batch's, in order, or the line itself.
    Every reader of the log expands lines here, so none needs to know both formats."""
    if record.get("type") != BATCH:
        return [record]
    trial = record.get("trial")
    return [{"trial": trial, **event} for event in record["data"]["events"]]


def after_seal(kind: str) -> bool:
    """Events a trial records after its bundle is sealed: scores (``match``) and what
    scorers did (``score_*``, e.g. a grader's ``score_sampling``). Bundles do not list
    them; they carry the bundle's digest or follow its ``match`` in the chain instead."""
    return kind == "match" or kind.startswith("score_")


class _Line(msgspec.Struct, gc=False):
    """A line's record, encoded as the dict it stands for (these keys, in this order):
    made faster than the dict, two a trial."""

    seq: int
    prev: str
    trial: str | None
    n: int
    parent: int | None
    type: str
    at: float
    data: Any


class Held(msgspec.Struct, gc=False):
    """An event held in a trial's batch: encoded as the dict it stands for (the same keys
    in the same order), and made in half the time (five to seven a trial)."""

    n: int
    parent: int | None
    type: str
    at: float
    data: dict[str, Any]


class MatchData(msgspec.Struct, gc=False):
    """A ``match`` event's data, encoded as its dict (``scorer``, ``status``, ``bundle``,
    ``record``, in that order)."""

    scorer: str
    status: str
    bundle: str
    record: str


class LineSink(Protocol):
    """Where finished event lines go: a file, an HTTP collector, a terminal."""

    def write_line(self, line: bytes) -> None:
        """Take one complete record line (without the newline)."""

    def close(self) -> None:
        """Flush and release whatever the sink holds."""


class EventLog:
    """Chains event records and hands each finished line to the sinks."""

    def __init__(self, sinks: list[LineSink], head: str = GENESIS, count: int = 0) -> None:
        self._sinks = sinks
        # A lone file sink (a run's events.jsonl, no HTTP collector) is written here,
        # without a call of its ``write_line`` for each line (two a trial).
        self._file = sinks[0].file if len(sinks) == 1 and isinstance(sinks[0], FileSink) else None
        self.lock = threading.RLock()  # re-entrant: TrialRecorder.record_if_open
        self.head = head
        self.count = count
        self.holding: dict[Any, float] = {}  # recorder → when its held batch began (s)

    def append(
        self, trial: str | None, n: int, parent: int | None, kind: str, data: dict[str, Any]
    ) -> str:
        """Append one record and return its hash (the ``prev`` of the next record)."""
        with self.lock:
            return self.append_held(trial, n, parent, kind, data)

    def append_held(
        self, trial: str | None, n: int, parent: int | None, kind: str, data: object
    ) -> str:
        """``append`` for a caller already holding ``lock`` (a trial's recorder, which
        guards its own numbering with the same lock: one acquire an event, not two).
        *data* is a dict, or a struct encoded as one (a ``match`` event's)."""
        at = time.time_ns() // 1000 / 1e6  # µs; round(time.time(), 6) costs 4×
        line = fast_json(_Line(self.count, self.head, trial, n, parent, kind, at, data))
        digest = _sha256(line).hexdigest()
        if self._file is not None:
            self._file.write(line + b"\n")  # FileSink.write_line, inlined
        else:
            for sink in self._sinks:
                sink.write_line(line)
        self.head = digest
        self.count += 1
        return digest

    def write_held(self, age: float) -> None:
        """Write every batch held *age* seconds or more (the run's periodic flush calls
        this: a trial that waits, a model call or an agent's step, does not keep its
        events from the log, and its sinks, for longer than that)."""
        with self.lock:
            oldest = time.time() - age
            for recorder, began in list(self.holding.items()):
                if began <= oldest:
                    recorder.write_batch()

    def close(self) -> None:
        """Close every sink."""
        for sink in self._sinks:
            sink.close()


class FileSink:
    """Appends lines to a file: the run directory's ``events.jsonl``."""

    def __init__(self, path: Any) -> None:
        self.file = open(path, "ab", buffering=1 << 16)  # noqa: SIM115 - closed in close()

    def write_line(self, line: bytes) -> None:
        """Append *line* and a newline."""
        self.file.write(line + b"\n")

    def flush(self) -> None:
        """Push buffered lines to the operating system."""
        self.file.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self.file.close()
