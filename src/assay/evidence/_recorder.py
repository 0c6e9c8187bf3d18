"""Recording events for the current trial from anywhere, without passing the trial around.

The runner binds a ``TrialRecorder`` to a context variable while a trial runs. Code deep in
a target or solver calls ``record_event("extra", {...})`` and the event lands in the right
trial, numbered and parented, even with many trials in flight: each asyncio task (and
each worker thread started from it) sees its own binding.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any, ClassVar

from assay._digest import fast_json, loads
from assay._scope import Scope
from assay.errors import ConfigError
from assay.evidence._log import BATCH, EventLog, Held, MatchData
from assay.evidence._store import ArtifactRef, ArtifactStore
from assay.evidence._usage import Usage, count_call

_current: ContextVar[TrialRecorder | None] = ContextVar("assay_trial_recorder", default=None)
CURRENT = _current
"""The recorder of the trial running in this context (``bound`` sets it): the run's lean
trial path sets and resets it itself, without a ``Scope`` made a trial."""
# The recorder whose scorers run in this context: set by ``scoring_phase`` in the scoring
# task, so its scorers (and threads they start) see it, and a stray thread of the trial's
# target, whose context was copied before, does not.
_scoring_in: ContextVar[TrialRecorder | None] = ContextVar("assay_scoring", default=None)
SCORING = _scoring_in
"""The recorder whose scorers run in this context (``scoring_phase`` sets it)."""
BATCH_EVENTS = 64
"""A batch line is written once it holds this many events (an agent's long trial is not
held in memory whole), at ``trial_finished``, and when the trial is closed or requeued."""
BATCH_SECONDS = 2.0
"""... or once the batch's first event is this many seconds old (checked as an event is
added, and by the run's periodic flush), so a long or waiting trial's progress reaches
the log (and its sinks) while it runs."""


class TrialRecorder:
    """Numbers one trial's events, logs them in batches and remembers the batches'
    hashes (each with its last event's number) for the bundle."""

    batch_limit: ClassVar[int] = BATCH_EVENTS  # 0: one line an event, the old format (tests)

    __slots__ = (
        "_batch",
        "_lock",
        "_log",
        "artifacts",
        "closed",
        "events",
        "last",
        "parent",
        "root",
        "store",
        "trial_id",
        "usage",
    )

    def __init__(self, log: EventLog, store: ArtifactStore, trial_id: str) -> None:
        self._log = log
        self.store = store
        self.trial_id = trial_id
        self.events: list[tuple[int, str]] = []  # (n, hash) of each line: a batch's last n
        self._batch: list[Held] = []  # events not logged yet
        self.last = 0
        self.closed = False
        self._lock = log.lock  # the log's: an event takes one lock, not two
        self.artifacts: dict[str, str] = {}
        self.parent: int | None = None
        self.root = 1
        self.usage = Usage()  # summed over this trial's sampling events, for the bundle

    def record(self, kind: str, data: dict[str, Any], parent: int | None = -1) -> int:
        """Append an event; *parent* defaults to the open scope (e.g. the attempt).

        ``match`` events are numbered but kept out of ``events`` (the bundle's list):
        they are recorded after the bundle is sealed and carry its digest instead.
        """
        # The lock is re-entrant: ``record_if_open`` holds it around its check and this
        # call (one frame an event, not two: a trivial trial records seven).
        with self._lock:  # a worker thread of a sync target may record concurrently
            n = self.last = self.last + 1
            parent_n = self.parent if parent == -1 else parent
            if kind == "match" or kind.startswith("score_") or not self.batch_limit:
                return self._line(n, parent_n, kind, data)  # _log.after_seal(kind), inlined
            at = time.time_ns() // 1000 / 1e6  # µs, as a line's ``at``
            batch = self._batch
            if not batch:
                self._log.holding[self] = at  # written by the run's flush if it waits
            batch.append(Held(n, parent_n, kind, at, data))
            if kind == "sampling":
                self.usage.add_sampling(data)
            if (
                kind == "trial_finished"
                or len(batch) >= self.batch_limit
                or at - batch[0].at >= BATCH_SECONDS
            ):
                self._flush()
            return n

    def own(self, kind: str, data: dict[str, Any], parent: int | None) -> int:
        """``record`` for the trial's own batched events (``trial_started``,
        ``attempt_*``, its ``sampling``, ``error``), parent given: none of ``record``'s
        checks for events after the seal (the trial path, five an event-light trial)."""
        if not self.batch_limit:  # one line an event (tests of the older format)
            return self.record(kind, data, parent)
        with self._lock:
            n = self.last = self.last + 1
            at = time.time_ns() // 1000 / 1e6
            batch = self._batch
            if not batch:
                self._log.holding[self] = at
            batch.append(Held(n, parent, kind, at, data))
            if kind == "sampling":
                self.usage.add_sampling(data)
            if len(batch) >= self.batch_limit or at - batch[0].at >= BATCH_SECONDS:
                self._flush()
            return n

    def own_two(
        self,
        kind: str,
        data: dict[str, Any],
        then: str,
        then_data: dict[str, Any],
        parent: int | None,
        *,
        nested: bool = False,
        summary: dict[str, Any] | None = None,
    ) -> int:
        """``own`` twice, for two events of one moment (an attempt's ``sampling`` or
        ``error``, then its ``attempt_finished``; with *nested* the second is the first's
        child: ``trial_started``, then its first ``attempt_started``), and with *summary*
        ``finish`` too (the attempt that ends its trial): one hold of the lock, one clock
        read, when the two fit the batch; else the calls themselves, which cut the batch
        where they would. Returns the first's number. *then* is no ``sampling``, and a
        ``sampling`` here is a target's answer (no ``model``): the trial's usage counts
        its tokens only when it has some."""
        with self._lock:
            batch = self._batch
            at = time.time_ns() // 1000 / 1e6
            ends = summary is not None
            if len(batch) + 2 + ends > self.batch_limit or (
                batch and at - batch[0].at >= BATCH_SECONDS
            ):  # rare: a batch cut between them, or one line an event (tests)
                n = self.own(kind, data, parent)
                self.own(then, then_data, n if nested else parent)
                if summary is not None:
                    self.finish(summary, self.root)
                return n
            n = self.last + 1
            self.last = n + 1 + ends
            if not batch:
                self._log.holding[self] = at
            batch += (
                Held(n, parent, kind, at, data),
                Held(n + 1, n if nested else parent, then, at, then_data),
            )
            if "usage" in data and kind == "sampling":  # a target's answer names no
                self.usage.add_sampling(data)  # model: only its tokens, if any, count
            if summary is not None:  # finish, inlined: the batch is written at once
                batch.append(Held(n + 2, self.root, "trial_finished", at, summary))
                self.closed = True
                self._flush()
            elif len(batch) >= self.batch_limit:
                self._flush()
            return n

    def finish(self, summary: dict[str, Any], parent: int | None) -> None:
        """Record ``trial_finished`` and close the trial (``record`` then ``close``, in
        one hold of the lock): its batch goes to the log, later stray events are dropped."""
        if not self.batch_limit:
            self.record("trial_finished", summary, parent)
            self.close()
            return
        with self._lock:  # own("trial_finished"), inlined: the batch is written at once
            n = self.last = self.last + 1
            at = time.time_ns() // 1000 / 1e6
            if not self._batch:
                self._log.holding[self] = at  # _flush takes it off
            self._batch.append(Held(n, parent, "trial_finished", at, summary))
            self.closed = True
            self._flush()

    def record_if_open(self, kind: str, data: dict[str, Any]) -> int | None:
        """Like ``record``, but dropped (``None``) once the trial is closed, unless it
        comes from the trial's scorers (then it is their ``score_`` event). A timed-out
        target's thread that wakes while the scorers run is dropped too: its context
        predates the scoring phase."""
        with self._lock:
            if _scoring_in.get() is self:
                kind = f"score_{kind}"
            elif self.closed:
                return None
            return self.record(kind, data)

    def sampled(self, data: dict[str, Any]) -> int | None:
        """``record_if_open("sampling", data)`` for a model's call (``Model._record``,
        once a call): batched as ``own`` batches, parented to the open scope, in one
        frame and one hold of the lock. A scorer's call, a closed trial and the
        one-line-an-event format go ``record_if_open``'s way."""
        with self._lock:
            if self.closed or not self.batch_limit or _scoring_in.get() is self:
                return self.record_if_open("sampling", data)
            n = self.last = self.last + 1
            at = time.time_ns() // 1000 / 1e6
            batch = self._batch
            if not batch:
                self._log.holding[self] = at
            batch.append(Held(n, self.parent, "sampling", at, data))
            self.usage.add_sampling(data)
            if len(batch) >= self.batch_limit or at - batch[0].at >= BATCH_SECONDS:
                self._flush()
            return n

    def match(self, scorer: str, status: str, bundle: str, record: str) -> int:
        """``record("match", {...}, parent=self.root)`` of a score's event from its four
        fields (no dict made): a line of its own after the trial's batch (the run's path,
        once a score: no checks of its type)."""
        with self._lock:
            n = self.last = self.last + 1
            if self._batch:
                self._flush()
            data = MatchData(scorer, status, bundle, record)
            self._log.append_held(self.trial_id, n, self.root, "match", data)
            return n

    def _line(self, n: int, parent: int | None, kind: str, data: dict[str, Any]) -> int:
        """Log one event as a line of its own: what comes after the bundle (a ``match``,
        a scorer's ``score_*``), after any batch still held, so numbers stay in order."""
        if self._batch:
            self._flush()
        digest = self._log.append_held(self.trial_id, n, parent, kind, data)
        if kind == "score_sampling":
            count_call(data)  # a grader's call: the scorer's usage, not the trial's
        elif kind != "match" and not kind.startswith("score_"):  # the format before batches
            self.events.append((n, digest))
            if kind == "sampling":
                self.usage.add_sampling(data)
        return n

    def write_batch(self) -> None:
        """``_flush`` for the log, which holds the lock (``EventLog.write_held``)."""
        if self._batch:
            self._flush()

    def _flush(self) -> None:
        """Log the held events as one batch line; the bundle lists it by its last event."""
        batch, self._batch = self._batch, []
        log = self._log
        del log.holding[self]
        n = batch[-1].n
        self.events.append((n, log.append_held(self.trial_id, n, None, BATCH, {"events": batch})))

    def flush(self) -> None:
        """Log the events held so far (a requeued trial waits for its next attempt)."""
        with self._lock:
            if self._batch:
                self._flush()

    def scoring_phase(self) -> _Scoring:
        """While scorers run: their model calls (a grader's) are recorded, parented to
        the trial, though the trial itself is closed."""
        return _Scoring(self)

    @property
    def scoring(self) -> bool:
        """Whether this context is the trial's scorers' (inside ``scoring_phase``)."""
        return _scoring_in.get() is self

    def close(self) -> None:
        """Seal the trial's event list: a stray thread can no longer add to it."""
        with self._lock:
            self.closed = True
            if self._batch:
                self._flush()

    def resume_after(
        self, events: list[tuple[int, str]], last: int, usage: Usage | None = None
    ) -> None:
        """Continue an unfinished earlier try whose events (up to number *last*) are
        logged; *usage* is what their ``sampling`` events add up to."""
        self.events = list(events)
        self.last = last
        if usage is not None:
            self.usage = usage

    def artifact(self, name: str, data: bytes, media: str) -> ArtifactRef:
        """Store *data* and remember it under *name* for the bundle."""
        digest = self.artifacts[name] = self.store.put_digest(data)  # store.put, inlined
        return ArtifactRef(digest, len(data), media)

    def stored(self, name: str, data: bytes) -> str:
        """``artifact`` returning the digest alone (the trial's own artifacts)."""
        digest = self.artifacts[name] = self.store.put_digest(data)
        return digest

    def scope(self, n: int) -> _Parent:
        """Make event *n* the default parent of events recorded inside the block."""
        return _Parent(self, n)

    def bound(self) -> Scope[TrialRecorder]:
        """Bind this recorder as the current one for the block."""
        return Scope(_current, self)


class _Parent:
    """``TrialRecorder.scope``: a class, not ``@contextmanager`` (entered per attempt)."""

    __slots__ = ("_n", "_outer", "_recorder")

    def __init__(self, recorder: TrialRecorder, n: int) -> None:
        self._recorder = recorder
        self._n = n

    def __enter__(self) -> None:
        self._outer, self._recorder.parent = self._recorder.parent, self._n

    def __exit__(self, *exc: object) -> None:
        self._recorder.parent = self._outer


class _Scoring:
    """``TrialRecorder.scoring_phase``: a class, not ``@contextmanager``."""

    __slots__ = ("_outer", "_recorder", "_token")

    def __init__(self, recorder: TrialRecorder) -> None:
        self._recorder = recorder

    def __enter__(self) -> None:
        recorder = self._recorder
        self._outer, recorder.parent = recorder.parent, recorder.root
        self._token = _scoring_in.set(recorder)

    def __exit__(self, *exc: object) -> None:
        _scoring_in.reset(self._token)
        self._recorder.parent = self._outer


def current_recorder() -> TrialRecorder | None:
    """The recorder of the trial running in this context, if any."""
    return _current.get()


RESERVED_TYPES = frozenset(
    {
        *(BATCH, "match", "sampling", "exec", "error", "model_call_failed"),
        *("trial_started", "trial_finished", "attempt_started", "attempt_finished"),
        *("tool_call", "tool_result", "approval", "agent_submission", "span_begin", "span_end"),
        *("run_started", "run_resumed", "run_finished", "run_interrupted", "postprocessor"),
        *("metrics", "gate", "look", "stopped", "not_run"),
    }
)
"""Event types assay writes itself, which ``record_event`` refuses (so do the prefixes
``score_`` and ``sandbox_``): its readers act on them. A ``sampling`` or ``score_*`` event
is a model call ``assay score`` replays, ``events`` a batch every reader expands, ``match``
a score, ``tool_call`` one whose artifacts ``verify`` looks up: one a task's code made up
would change what the run's evidence says, or stop it verifying."""


def record_event(kind: str, data: dict[str, Any]) -> int | None:
    """Record a free-form event (e.g. ``extra``) in the current trial, if one is running.

    Returns the event's number within its trial, or ``None`` outside a trial. A type
    assay writes itself (``RESERVED_TYPES``) is a ``ConfigError``.
    """
    if kind in RESERVED_TYPES or kind.startswith(("score_", "sandbox_")):
        raise ConfigError("event.reserved", kind=kind)
    return record_own_event(kind, data)


def record_own_event(kind: str, data: dict[str, Any]) -> int | None:
    """``record_event`` for assay's own code, whose types may be reserved ones (a code
    scorer's ``exec``, an agent's ``agent_submission``)."""
    recorder = _current.get()
    if recorder is None:
        return None
    # A timed-out worker thread may still call this after its trial was sealed: the
    # closed recorder drops it rather than adding to evidence that is already closed.
    # The data is encoded now, though the batch is written later: a value JSON cannot
    # hold fails here, at the caller, and a dict the caller changes afterwards is logged
    # as it was (assay's own events are fresh dicts of JSON values).
    return recorder.record_if_open(kind, loads(fast_json(data)))
