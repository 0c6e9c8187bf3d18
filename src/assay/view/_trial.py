"""One trial as its page shows it, read through the checked lookups ``assay show`` uses.

The bundle and its output come from ``assay.evidence.read_trial`` (through the bundle
index, each checked against its digest: an edited byte is an EvidenceError, shown as the
page's banner, never displayed), and the sample as ``assay show`` checks it. The score
records are read at the offsets the run's table noted (``scores.jsonl`` hashed against
the manifest), and must name this bundle; the events come from ``checked_events`` over
the span of the log that holds this trial's events (each line against the hash its
bundle lists), so a page of a 100,000-trial run does not read the whole log. The
transcript is the one ``assay show --trial`` prints. Events are shown a page at a time;
model calls (``sampling`` events) are listed apart.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from assay.cli._transcript import transcript_lines
from assay.evidence import TrialEvidence, checked_events, decode_output, read_trial
from assay.evidence._lookup import _bound, _checked_sample
from assay.model._content import shown_content
from assay.view._artifacts import SHA256
from assay.view._table import TrialTable

TRIAL_ID = re.compile(r"t-[0-9a-f]{24}")

EVENTS_PER_PAGE = 200
SHOWN_CHARS = 20_000
"""A value longer than this is cut on the page; its raw artifact link has all of it."""


class EventRow(msgspec.Struct):
    """One event of the timeline: number, type, seconds since the trial started, data."""

    n: int
    type: str
    parent: int | None
    offset: float
    data: str
    artifacts: list[str]


class TrialPage(msgspec.Struct):
    """What the trial page shows."""

    bundle: dict[str, Any]
    sample: dict[str, Any] | None
    output: str
    output_sha: str | None
    scores: list[dict[str, Any]]
    transcript: list[str]
    model_calls: list[EventRow]
    events: list[EventRow]
    events_total: int
    events_page: int
    events_pages: int


def trial_page(table: TrialTable, trial_id: str, events_page: int = 1) -> TrialPage | None:
    """The page of *trial_id* (None if the run has no such trial)."""
    at = table.position(trial_id) if TRIAL_ID.fullmatch(trial_id) else None
    if at is None:
        return None  # not in the table yet (finished since it was built): reload
    run = table.folder(at)  # the run, or the shard of a merged run that holds the trial
    found = read_trial(run, trial_id)
    if found is None or found[0]["trial"]["index"] != at:
        return None
    bundle, data = found
    seen = bundle["observation"]
    output = _decoded(data, seen["media"]) if data is not None else None
    events = checked_events(run, bundle, table.event_span(at))
    trial = TrialEvidence(
        bundle, data, _bound(run, bundle, table.score_records(at)), _checked_sample(run, bundle)
    )
    start = events[0]["at"] if events else 0.0
    pages = max(1, -(-len(events) // EVENTS_PER_PAGE))
    page = min(max(1, events_page), pages)
    shown = events[(page - 1) * EVENTS_PER_PAGE : page * EVENTS_PER_PAGE]
    return TrialPage(
        bundle=trial.bundle,
        sample=trial.sample,
        output=_text(_answer(output)),
        output_sha=seen.get("output"),
        scores=trial.scores,
        transcript=_transcript(output, events),
        model_calls=[_row(e, start) for e in events if e.get("type") == "sampling"],
        events=[_row(e, start) for e in shown],
        events_total=len(events),
        events_page=page,
        events_pages=pages,
    )


def _decoded(data: bytes, media: str) -> Any:
    try:
        return decode_output(data, media)
    except ValueError:  # bytes that are not what their media type says: shown as recorded
        return data.decode("utf-8", errors="replace")


def _is_state(output: Any) -> bool:
    return isinstance(output, dict) and isinstance(output.get("messages"), list)


def _answer(output: Any) -> Any:
    """What the target answered: a task state's last message, else the output itself."""
    if _is_state(output):
        return shown_content(((output.get("output") or {}).get("message") or {}).get("content", ""))
    return "" if output is None else output


def _transcript(output: Any, events: list[dict[str, Any]]) -> list[str]:
    if not _is_state(output):
        return []
    return transcript_lines(output, events, _compact)


def _compact(value: Any) -> str:
    """A transcript item: arguments and results on one line, as ``assay show`` prints them."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _text(text)


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    if len(text) > SHOWN_CHARS:
        return text[:SHOWN_CHARS] + f"… ({len(text) - SHOWN_CHARS} more characters)"
    return text


def _row(event: dict[str, Any], start: float) -> EventRow:
    data = event.get("data")
    return EventRow(
        n=int(event.get("n") or 0),
        type=str(event.get("type")),
        parent=event.get("parent"),
        offset=round(float(event.get("at") or start) - start, 4),
        data=_text(data) if data is not None else "",
        artifacts=sorted(set(_digests(data))),
    )


def _digests(value: Any) -> list[str]:
    """Every artifact digest named in an event's data (64 hex digits), for raw links."""
    if isinstance(value, str):
        return [value] if SHA256.fullmatch(value) else []
    if isinstance(value, dict):
        return [d for item in value.values() for d in _digests(item)]
    if isinstance(value, list):
        return [d for item in value for d in _digests(item)]
    return []
