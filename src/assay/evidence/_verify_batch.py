"""The event pass's checks of a batch line: each event in it is checked exactly as a line
of its own is (numbering, parents, the artifacts it names), and the batch's own shape.

Kept apart from ``_verify_events`` (whose loop calls these) only for the file's size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from assay.evidence._layout import EVENTS
from assay.evidence._log import BATCH
from assay.evidence._verify_refs import REFERRING, RefBuilder, event_refs

if TYPE_CHECKING:
    from assay.evidence._verify_pack import Finding


class _Batched(msgspec.Struct, gc=False):
    """One event of a batch line: its fields but ``trial`` (the line's) and ``at``."""

    n: int
    parent: int | None
    type: str
    data: msgspec.Raw


class _Batch(msgspec.Struct, gc=False):
    """A batch line's data: the trial's events it holds, in order."""

    events: list[_Batched]


class BatchLine(msgspec.Struct, gc=False, tag_field="type", tag=BATCH):
    """A batch line decoded whole, its events with it (the event pass's fast path: the
    line's fields as ``_EventHead`` has them, but the data read once, not twice)."""

    prev: str
    trial: str | None
    n: int
    parent: int | None
    data: _Batch


class _MatchData(msgspec.Struct, gc=False):
    """A ``match`` event's data, of which verify needs the score line's hash."""

    record: Any = None


class MatchLine(msgspec.Struct, gc=False, tag_field="type", tag="match"):
    """A ``match`` line decoded whole (the fast path's other usual line)."""

    prev: str
    trial: str | None
    n: int
    parent: int | None
    data: _MatchData


_decode_batch = msgspec.json.Decoder(_Batch).decode
decode_match = msgspec.json.Decoder(_MatchData).decode
decode_line = msgspec.json.Decoder(BatchLine | MatchLine).decode
"""A batch or ``match`` line of the usual shape; anything else (another type, another
shape) raises, and is read as an ``_EventHead`` instead, which finds the same."""
_COMMON = frozenset({"trial_started", "attempt_started", "attempt_finished", "trial_finished"})
"""Kinds that name no artifact and are logged before the bundle: numbering is all."""


def check_batch(
    number: int,
    head: Any,
    seen: list[Any],
    refs: RefBuilder,
    found: list[Finding],
) -> int:
    """Check the events of the batch line *number* (read as an ``_EventHead``) as
    ``check_events`` does, or name it unreadable."""
    try:
        events = _decode_batch(head.data).events
    except msgspec.DecodeError:
        found.append((f"{EVENTS}:{number}", "verify.not_record", {"kind": "event"}))
        return 1  # a record, unread
    return check_events(number, head, events, seen, refs, found)


def check_events(
    number: int,
    head: Any,
    events: list[Any],
    seen: list[Any],
    refs: RefBuilder,
    found: list[Finding],
) -> int:
    """Check the *events* of the batch line *number* exactly as lines of their own are
    checked (numbering, parents, the artifacts they name); the batch itself must be a
    trial's, parentless, not empty, numbered as its last event, and hold no event that is
    logged after the bundle (those are lines of their own, bound by the bundle's digest).
    *seen* is the trial's ``[last n, fold]``; the count of events is returned."""
    trial = head.trial
    if trial is None or head.parent is not None or not events or head.n != events[-1].n:
        found.append((f"{EVENTS}:{number}", "verify.event_batch", {"n": head.n}))
    referring, common = REFERRING, _COMMON
    last = seen[0]
    for event in events:
        n = event.n
        parent = event.parent
        if parent is None:  # a trial's first event (``numbering`` finds nothing)
            if n != 1 or last:
                numbering(number, trial, n, parent, event.type, last, found)
        elif n != last + 1 or not 0 < parent < n:
            numbering(number, trial, n, parent, event.type, last, found)
        last = n
        kind = event.type
        if kind in common:  # most events: nothing more to check (one set lookup)
            continue
        if kind == "sampling":  # a model's call names artifacts (its data says "model")
            if b'"model"' in bytes(event.data):
                event_refs(number, event.data, refs)
            continue
        if kind in referring:
            event_refs(number, event.data, refs)
        if kind == "match" or kind.startswith("score_"):  # _log.after_seal, inlined
            found.append((f"{EVENTS}:{number}", "verify.batch_kind", {"kind": kind}))
    seen[0] = last
    return len(events)


def numbering(
    number: int,
    trial: str | None,
    n: int,
    parent: int | None,
    kind: str,
    last: int,
    found: list[Finding],
) -> None:
    """The findings of event *n* (with *parent*) at line *number*, after its trial's
    event *last*: numbered out of order, or a parent that is not an earlier event (only
    a trial's first event, or a resumed trial's new ``trial_started``, has none)."""
    where = f"{EVENTS}:{number}"
    if n != last + 1:
        found.append((where, "verify.event_order", {"n": n, "trial": trial}))
    if parent is None:
        if n != 1 and kind != "trial_started":  # a resumed trial starts a second root
            found.append((where, "verify.event_parent", {"parent": parent, "n": n}))
    elif not 1 <= parent < n:
        found.append((where, "verify.event_parent", {"parent": parent, "n": n}))
