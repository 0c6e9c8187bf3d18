"""The sample table's first pages before the run's table is built, through the indexes.

Why: building the table of a 100,000-trial run takes seconds (one pass over its plan,
bundles and scores), and a reader who opens the sample table first should see rows at
once. An unfiltered page in plan order needs only its own trials: their plan lines (the
first ``page × 50`` lines of ``plan.jsonl``), each bundle through ``bundles.idx`` (checked
against its digest, as ``assay show`` reads it), its input and answer (checked artifacts)
and its score lines. Score lines are written with their bundle, in the same order, so a
trial's scores sit at about the same fraction of ``scores.jsonl`` as its bundle does of
``bundles.jsonl``: a window there is searched, widened until the lines are found (the
whole file at worst), and each line must name the bundle (else it is tampering, exit 4
in the CLI, a banner here). A merged run's trials are in the shards it holds
(``shards/K``): each trial is looked up in each shard's ``bundles.idx`` and read there,
its scores in that shard's ``scores.jsonl``. Filters, counts and sorting wait for the
table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay._digest import loads
from assay.evidence import BUNDLE_INDEX, BUNDLES, PLAN, SCORES, decode_output, read_trial
from assay.evidence._framed import evidence_size, open_evidence
from assay.evidence._index import _BUNDLE, _search
from assay.evidence._lookup import _bound, _checked_sample
from assay.evidence._shards import trial_folders
from assay.model._content import shown_content
from assay.view._columns import manifest_of
from assay.view._rows import PENDING, Page, Query, Row, as_text, cut

QUICK_FROM_BYTES = 1 << 20
"""A run whose ``plan.jsonl`` is smaller (under about 7,000 trials) builds its table at
once (in well under a second): its pages never need this module."""

QUICK_PAGES = 20
"""Pages served this way (each reads the plan from its start): past it, wait for the table."""

WINDOW = 1 << 16


def can_serve(run: Path, query: Query, from_bytes: int = QUICK_FROM_BYTES) -> bool:
    """True when *query* is a page this module can serve: a sealed run (it has its bundle
    index; a merged run, each shard it holds) whose plan has at least *from_bytes* bytes,
    no filter, no search, plan order, one of the first pages."""
    plain = query.filters() == ("", "", "", "", "index") and not query.q
    if not plain or query.page > QUICK_PAGES:
        return False
    folders = trial_folders(run, manifest_of(run))
    if not all((folder / BUNDLE_INDEX).is_file() for folder in folders):
        return False
    try:
        return evidence_size(run / PLAN) >= from_bytes
    except OSError:
        return False


def quick_page(run: Path, query: Query) -> Page:
    """Page *query.page* of the run's trials in plan order (``total`` None: not counted).
    A merged run's trials are read in the shard that holds each (``shards/K``)."""
    start = (query.page - 1) * query.per
    plans = list(_plan_lines(run, start, query.per + 1))[: query.per + 1]
    shown = plans[: query.per]
    found = _located(trial_folders(run, manifest_of(run)), [p["trial_id"] for p in shown])
    windows = {
        folder: _ScoreWindow(folder, {t: at for t, (f, at) in found.items() if f == folder})
        for folder in {folder for folder, _ in found.values()}
    }
    rows = [_row(plan, found.get(plan["trial_id"]), windows) for plan in shown]
    return Page(rows, None, len(plans) > query.per)


def _located(folders: list[Path], trial_ids: list[str]) -> dict[str, tuple[Path, int]]:
    """The folder whose bundle index lists each trial and its bundle's offset there
    (a trial with no bundle yet is left out)."""
    found: dict[str, tuple[Path, int]] = {}
    for trial_id in trial_ids:
        key = bytes.fromhex(trial_id.removeprefix("t-"))
        for folder in folders:
            hit = _search(folder / BUNDLE_INDEX, _BUNDLE, key)
            if hit is not None:
                found[trial_id] = (folder, hit[0])
                break
    return found


def _plan_lines(run: Path, start: int, count: int) -> Iterator[dict[str, Any]]:
    with open_evidence(run / PLAN) as handle:
        for number, line in enumerate(handle):
            if number >= start + count:
                return
            if number >= start and line.endswith(b"\n"):
                yield loads(line)


def _row(
    plan: dict[str, Any], where: tuple[Path, int] | None, windows: dict[Path, _ScoreWindow]
) -> Row:
    """The row of *plan*'s trial, read in the folder *where* names (None: no bundle
    yet, the trial is pending)."""
    row = Row(
        index=plan["index"],
        trial_id=plan["trial_id"],
        sample_id=str(plan["sample_id"]),
        target_id=plan["target_id"],
        repetition=plan.get("repetition", 1),
        state=PENDING,
        scores=[],
    )
    folder = where[0] if where is not None else None
    found = None if folder is None else read_trial(folder, row.trial_id)
    if folder is None or found is None:
        return row
    bundle, data = found
    row.state = bundle["state"]
    sample = _checked_sample(folder, bundle) or {}
    row.input = cut(as_text(sample.get("input", "")))
    if data is not None:
        row.output = cut(_answer(data, bundle["observation"]["media"]))
    scores = _bound(folder, bundle, windows[folder].lines_of(row.trial_id))
    row.scores = [
        (s["scorer_id"], s["status"], None if s.get("value") is None else float(s["value"]))
        for s in sorted(scores, key=lambda s: str(s["scorer_id"]))
    ]
    return row


def _answer(data: bytes, media: str) -> str:
    try:
        value = decode_output(data, media)
    except ValueError:
        return data.decode("utf-8", errors="replace")
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = shown_content(((value.get("output") or {}).get("message") or {}).get("content", ""))
    return as_text(value)


class _ScoreWindow:
    """The bytes of ``scores.jsonl`` around where a page's trials' lines should be: read
    once for the page (the trials of a page sit close together), searched per trial, and
    widened for a trial whose lines are not wholly inside."""

    def __init__(self, run: Path, offsets: dict[str, int]) -> None:
        """*offsets*: where each trial's bundle line starts in *run*'s ``bundles.jsonl``."""
        self.run = run
        self.size = evidence_size(run / SCORES)
        bundles = evidence_size(run / BUNDLES)
        self.middles = {
            trial_id: int(self.size * (offset / bundles if bundles else 0.0))
            for trial_id, offset in offsets.items()
        }
        spread = list(self.middles.values()) or [0]
        self.low, self.high = self._bounds(min(spread), max(spread), WINDOW)
        self.lines = self._read(self.low, self.high)

    def _bounds(self, first: int, last: int, width: int) -> tuple[int, int]:
        return max(0, first - width), min(self.size, last + width)

    def _read(self, low: int, high: int) -> list[bytes]:
        with open_evidence(self.run / SCORES) as handle:
            handle.seek(low)
            return handle.read(high - low).split(b"\n")

    def lines_of(self, trial_id: str) -> list[dict[str, Any]]:
        """The score lines of *trial_id* (the whole file searched at worst)."""
        low, high, lines = self.low, self.high, self.lines
        middle, width = self.middles.get(trial_id, 0), WINDOW
        needle = f'"trial_id":"{trial_id}"'.encode()
        while True:
            inner = lines[1:-1] if low > 0 else lines[:-1]  # whole lines only
            hits = [loads(line) for line in inner if needle in line]
            # every line of the trial is inside when the hits do not touch the edges
            inside = (low == 0 or needle not in lines[0]) and (
                high == self.size or needle not in lines[-1]
            )
            if (hits and inside) or (low == 0 and high == self.size):
                return [h for h in hits if h.get("trial_id") == trial_id]
            width *= 4
            low, high = self._bounds(middle, middle, width)
            lines = self._read(low, high)
