"""The sample table: every trial of a run, filtered, sorted and paged on the server.

Why a compact table: a page of 50 rows out of 100,000 must not parse 100,000 records per
request. The table is built once per version of the run's files (plan, bundles, scores:
one pass each, each line decoded into a narrow struct) and kept as columns of small
integers and shared strings, a few MB for 100,000 trials. Each file is hashed while it
is read and compared with the digest the sealed manifest lists, so what the table shows
is what ``verify`` vouches for; a mismatch is kept as a problem and shown as a banner.

Text search reads each candidate's input and output artifacts (checked against their
digests) in the page's order and stops once the page is full: searching is linear in
the trials scanned, paging through filters is not.
"""

from __future__ import annotations

import math
import re
import threading
from array import array
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads
from assay.evidence import BUNDLES, EVENTS, MANIFEST, PLAN, SCORES, decode_output
from assay.evidence._framed import open_evidence
from assay.evidence._shards import trial_folders
from assay.model._content import shown_content
from assay.view._artifacts import ArtifactReader
from assay.view._columns import (
    BundleLine,
    Codes,
    HashedChunks,
    PlanLine,
    ScoreLine,
    Shas,
    listed_digests,
    manifest_of,
)
from assay.view._rows import NOT_SCORED, PENDING, Page, Query, Row, as_text, cut
from assay.view._select import predicate, sort_key

_EVENT_TRIAL = re.compile(rb'"trial":"(t-[0-9a-f]{24})"')


class TrialTable:
    """Every planned trial of one run, as columns (see the module docstring)."""

    def __init__(self, run: Path) -> None:
        self.run = run
        # where the trials are: the run itself, or a merged run's shards (``shards/K``)
        self.folders = trial_folders(run, manifest_of(run))
        self.readers = [ArtifactReader(folder) for folder in self.folders]
        self.folder_of = array("H")  # which of ``folders`` holds each trial's records
        self.problems: list[str] = []
        self.trial_ids: list[str] = []
        self.sample_ids: list[str] = []
        self.targets = Codes()
        self.target_of = array("H")
        self.repetition = array("I")
        self.states = Codes(PENDING)
        self.state_of = bytearray()
        self.statuses = Codes(NOT_SCORED)
        self.scorers: list[str] = []
        self.status_of: dict[str, bytearray] = {}
        self.value_of: dict[str, array[float]] = {}
        self.score_at: dict[str, array[int]] = {}  # byte offset of each score line, or -1
        self._spans: tuple[array[int], array[int]] | None = None
        self.sample_sha = Shas(0)
        self.output_sha = Shas(0)
        self.medias = Codes("text/plain")
        self.media_of = bytearray()
        self._sorted: dict[tuple[str, ...], list[int]] = {}
        self._lock = threading.Lock()
        self._spans_lock = threading.Lock()
        listed = listed_digests(run)
        self._read_plan(listed)
        self._read_bundles(listed)
        self._read_scores(listed)

    def __len__(self) -> int:
        return len(self.trial_ids)

    def _check(
        self, chunks: HashedChunks, name: str, listed: dict[str, str], shown: str = ""
    ) -> None:
        want = listed.get(name)
        shown = shown or name
        if want is not None and want != "sha256:" + chunks.digest.hexdigest():
            self.problems.append(f"{shown} does not match the digest in {MANIFEST}")
        if chunks.unreadable:
            self.problems.append(f"{shown}: {chunks.unreadable} line(s) are not records")

    def _read_plan(self, listed: dict[str, str]) -> None:
        chunks = HashedChunks(self.run / PLAN)
        samples: dict[str, str] = {}  # one string per sample, shared by its trials
        for plan in chunks.records(msgspec.json.Decoder(list[PlanLine])):
            if plan.index != len(self.trial_ids):
                self.problems.append(f"{PLAN}: trial {plan.index} is out of order")
                break
            self.trial_ids.append(plan.trial_id)
            sample = str(plan.sample_id)
            self.sample_ids.append(samples.setdefault(sample, sample))
            self.target_of.append(self.targets.code(plan.target_id))
            self.repetition.append(plan.repetition)
        self._check(chunks, PLAN, listed)
        count = len(self.trial_ids)
        self.state_of = bytearray(count)
        self.media_of = bytearray(count)
        self.sample_sha, self.output_sha = Shas(count), Shas(count)
        self.folder_of = array("H", [0]) * count

    def _read_bundles(self, listed: dict[str, str]) -> None:
        count = len(self.trial_ids)
        decoder = msgspec.json.Decoder(list[BundleLine])
        for number, folder in enumerate(self.folders):
            chunks = HashedChunks(folder / BUNDLES)
            for bundle in chunks.records(decoder):
                at = bundle.trial.index
                if 0 <= at < count:
                    self.state_of[at] = self.states.code(bundle.state)
                    self.sample_sha.set(at, bundle.artifacts.sample)
                    self.output_sha.set(at, bundle.observation.output)
                    self.media_of[at] = self.medias.code(bundle.observation.media)
                    self.folder_of[at] = number
            self._check_in(folder, chunks, BUNDLES, listed)

    def _check_in(
        self, folder: Path, chunks: HashedChunks, name: str, listed: dict[str, str]
    ) -> None:
        """``_check`` of a file of *folder*: a shard's against the shard's own manifest."""
        if folder == self.run:
            self._check(chunks, name, listed)
        else:
            shard = folder.relative_to(self.run).as_posix()
            self._check(chunks, name, listed_digests(folder), f"{shard}/{name}")

    def position(self, trial_id: str) -> int | None:
        """The plan position of *trial_id* (None: not in the plan). A scan, once a
        trial page: about a millisecond at 100,000 trials, where a dict would hold one
        entry a trial for the table's life."""
        try:
            return self.trial_ids.index(trial_id)
        except ValueError:
            return None

    def folder(self, at: int) -> Path:
        """The folder whose records hold the trial at *at* (a shard of a merged run)."""
        return self.folders[self.folder_of[at]]

    def _read_scores(self, listed: dict[str, str]) -> None:
        for folder in self.folders:
            self._read_scores_in(folder, listed)

    def _read_scores_in(self, folder: Path, listed: dict[str, str]) -> None:
        """The scores in *folder*'s file, each noted at its offset there (a trial's
        scores are in the folder its bundle is in)."""
        chunks = HashedChunks(folder / SCORES)
        count = len(self.trial_ids)
        for offset, score in chunks.placed_records(msgspec.json.Decoder(list[ScoreLine])):
            if not 0 <= score.index < count:
                continue
            if score.scorer_id not in self.status_of:
                self.scorers.append(score.scorer_id)
                self.status_of[score.scorer_id] = bytearray(count)
                self.value_of[score.scorer_id] = array("d", [math.nan]) * count
                self.score_at[score.scorer_id] = array("q", [-1]) * count
            self.score_at[score.scorer_id][score.index] = offset
            self.status_of[score.scorer_id][score.index] = self.statuses.code(score.status)
            value = score.value
            self.value_of[score.scorer_id][score.index] = math.nan if value is None else value
        self._check_in(folder, chunks, SCORES, listed)

    # -- one trial's records ---------------------------------------------------------------

    def score_records(self, at: int) -> list[dict[str, Any]]:
        """The score records of the trial at plan position *at*, read at their offsets
        (``scores.jsonl`` was hashed against the manifest when the table was built)."""
        records = []
        with open_evidence(self.folder(at) / SCORES) as handle:
            for scorer in self.scorers:
                offset = self.score_at[scorer][at]
                if offset >= 0:
                    handle.seek(offset)
                    records.append(loads(handle.readline()))
        return records

    def prepare_spans(self) -> None:
        """Find every trial's span of the event log now (on a background thread, right
        after the table is built: a trial page then finds it ready)."""
        if len(self):
            self.event_span(0)

    def event_span(self, at: int) -> tuple[int, int]:
        """The bytes of ``events.jsonl`` (of ``folder(at)``) that hold every event of the
        trial at *at*: from its first line to the end of its last. Found by one pass over
        the log the first time a trial page asks (kept: two integers a trial), not by a
        pass a page."""
        with self._spans_lock:  # not the queries' lock: pages go on while this scans
            if self._spans is None:
                self._spans = self._scan_spans()
            first, last = self._spans
        return first[at], last[at]

    def _scan_spans(self) -> tuple[array[int], array[int]]:
        count = len(self.trial_ids)
        first, last = array("q", [-1]) * count, array("q", [0]) * count
        position = {t: at for at, t in enumerate(self.trial_ids)}
        for folder in self.folders:  # a trial's events are all in its folder's log
            offset = 0
            for block in HashedChunks(folder / EVENTS).lines():
                for match in _EVENT_TRIAL.finditer(block):
                    at = position.get(match.group(1).decode(), -1)
                    if at >= 0:
                        start = block.rfind(b"\n", 0, match.start()) + 1
                        if first[at] < 0:
                            first[at] = offset + start
                        last[at] = offset + block.index(b"\n", match.end()) + 1
                offset += len(block)
        return first, last

    # -- queries -------------------------------------------------------------------------

    def page(self, query: Query) -> Page:
        """The rows *query* asks for, with the input and output shown in each."""
        order = self._selected(query)
        start = (max(1, query.page) - 1) * query.per
        if query.q:
            found, more = self._searched(order, query.q.casefold(), start + query.per)
            positions, total = found[start:], None
        else:
            positions, more, total = order[start : start + query.per], False, len(order)
            more = start + query.per < len(order)
        return Page([self.row(at, previews=True) for at in positions], total, more)

    def _selected(self, query: Query) -> list[int]:
        """The positions the filters keep, in the query's order (cached per filter)."""
        key = query.filters()
        with self._lock:
            cached = self._sorted.get(key)
        if cached is not None:
            return cached
        keep = predicate(self, query)
        order = [at for at in range(len(self.trial_ids)) if keep(at)]
        sort = query.sort.lstrip("-")
        if sort != "index" or query.sort.startswith("-"):
            order.sort(key=sort_key(self, sort, query.scorer), reverse=query.sort.startswith("-"))
        with self._lock:
            if len(self._sorted) >= 16:
                self._sorted.pop(next(iter(self._sorted)))
            self._sorted[key] = order
        return order

    def _searched(self, order: list[int], needle: str, wanted: int) -> tuple[list[int], bool]:
        """The first *wanted* positions whose input or output holds *needle*, and whether
        there is at least one more."""
        found: list[int] = []
        inputs: dict[str, str] = {}  # a sample's input is shared by its targets and epochs
        for at in order:
            if (
                needle in self._input_text(at, inputs).casefold()
                or needle in self._output_text(at).casefold()
            ):
                if len(found) == wanted:
                    return found, True
                found.append(at)
        return found, False

    def _input_text(self, at: int, seen: dict[str, str] | None = None) -> str:
        sha = self.sample_sha.get(at)
        if sha is None:
            return ""
        if seen is not None and sha in seen:
            return seen[sha]
        record = loads(self.readers[self.folder_of[at]].read(sha))
        value = record.get("input") if isinstance(record, dict) else record
        text = as_text(value)
        if seen is not None:
            seen[sha] = text
        return text

    def _output_text(self, at: int) -> str:
        sha = self.output_sha.get(at)
        if sha is None:
            return ""
        data = self.readers[self.folder_of[at]].read(sha)
        try:
            value = decode_output(data, self.medias.names[self.media_of[at]])
        except ValueError:
            return data.decode("utf-8", errors="replace")
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            answer = (value.get("output") or {}).get("message") or {}
            value = shown_content(answer.get("content", ""))
        return as_text(value)

    def row(self, at: int, *, previews: bool = False) -> Row:
        """The trial at plan position *at*; with its input and output cut short if asked."""
        scores = [
            (
                scorer,
                self.statuses.names[self.status_of[scorer][at]],
                None if math.isnan(self.value_of[scorer][at]) else self.value_of[scorer][at],
            )
            for scorer in self.scorers
        ]
        row = Row(
            index=at,
            trial_id=self.trial_ids[at],
            sample_id=self.sample_ids[at],
            target_id=self.targets.names[self.target_of[at]],
            repetition=self.repetition[at],
            state=self.states.names[self.state_of[at]],
            scores=scores,
        )
        if previews:
            row.input = cut(self._input_text(at))
            row.output = cut(self._output_text(at))
        return row

    def find(self, target: str, sample_id: str, repetition: int) -> int | None:
        """The plan position of one trial by target, sample and repetition (a scan over
        the table's columns: the compare page looks up a few flipped pairs)."""
        code = self.targets.find(target)
        for at, sample in enumerate(self.sample_ids):
            same = self.target_of[at] == code and self.repetition[at] == repetition
            if same and sample == sample_id:
                return at
        return None
