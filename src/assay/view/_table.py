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

import contextlib
import hashlib
import math
import re
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads
from assay.errors import EvidenceError
from assay.evidence import BUNDLES, EVENTS, MANIFEST, PLAN, SCORES, decode_output
from assay.evidence._framed import framed, open_evidence
from assay.model._content import shown_content
from assay.view._artifacts import ArtifactReader

PENDING = "pending"
NOT_SCORED = "-"
PREVIEW_CHARS = 160
PER_PAGE = 50
_EVENT_TRIAL = re.compile(rb'"trial":"(t-[0-9a-f]{24})"')
SORTS = ("index", "sample", "target", "state", "score")


class _PlanLine(msgspec.Struct):
    index: int
    trial_id: str
    sample_id: str | int
    target_id: str
    repetition: int = 1


class _BundleTrial(msgspec.Struct):
    index: int


class _Observation(msgspec.Struct):
    output: str | None = None
    media: str = "text/plain"


class _Artifacts(msgspec.Struct):
    sample: str | None = None


class _BundleLine(msgspec.Struct):
    trial: _BundleTrial
    state: str
    observation: _Observation
    artifacts: _Artifacts = msgspec.field(default_factory=_Artifacts)


class _ScoreLine(msgspec.Struct):
    index: int
    scorer_id: str
    status: str
    value: float | None = None


class Query(msgspec.Struct, frozen=True):
    """What the sample table was asked for (from the page's query parameters)."""

    target: str = ""
    state: str = ""
    scorer: str = ""
    status: str = ""
    q: str = ""
    sort: str = "index"
    page: int = 1
    per: int = PER_PAGE

    def filters(self) -> tuple[str, str, str, str, str]:
        """The part of the query that selects rows (not the search, not the page)."""
        return (self.target, self.state, self.scorer, self.status, self.sort)


class Row(msgspec.Struct):
    """One trial as the table shows it."""

    index: int
    trial_id: str
    sample_id: str
    target_id: str
    repetition: int
    state: str
    scores: list[tuple[str, str, float | None]]
    input: str = ""
    output: str = ""


class Page(msgspec.Struct):
    """One page of rows; ``total`` is None when a search stopped once the page was full."""

    rows: list[Row]
    total: int | None
    more: bool


class _Codes:
    """Strings stored once, referred to by a small integer."""

    def __init__(self, *first: str) -> None:
        self.names: list[str] = list(first)
        self._code = {name: i for i, name in enumerate(first)}

    def find(self, name: str) -> int:
        """The code of *name*, or -1 (matches nothing) when no trial has it."""
        return self._code.get(name, -1)

    def code(self, name: str) -> int:
        found = self._code.get(name)
        if found is None:
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found


CHUNK = 1 << 22
"""Bytes read (and decoded as one JSON array) at a time: few calls, bounded memory."""


class _HashedChunks:
    """A JSONL file read in chunks of whole lines, each decoded as one JSON array of
    records, with every byte read hashed (to compare with the manifest). A torn last
    line is hashed but not decoded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()
        self.unreadable = 0

    def lines(self) -> Iterator[bytes]:
        """Blocks of whole lines, each ending with a newline."""
        try:
            handle = open_evidence(self.path)
        except FileNotFoundError:
            return
        with handle:
            rest = b""
            while data := handle.read(CHUNK):
                self.digest.update(data)
                data = rest + data
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    yield data[:cut]

    def records(self, decoder: msgspec.json.Decoder[Any]) -> Iterator[Any]:
        """Each whole line's record, decoded a chunk at a time."""
        for _, item in self.placed_records(decoder, offsets=False):
            yield item

    def placed_records(
        self, decoder: msgspec.json.Decoder[Any], *, offsets: bool = True
    ) -> Iterator[tuple[int, Any]]:
        """Each whole line's byte offset (0 unless *offsets*) and record."""
        offset = 0
        for block in self.lines():
            try:
                items = decoder.decode(b"[" + block[:-1].replace(b"\n", b",") + b"]")
                starts = _line_starts(block) if offsets else [0] * len(items)
            except (msgspec.DecodeError, msgspec.ValidationError):
                starts = _line_starts(block)
                items = self._one_by_one(block, starts, decoder)
            for start, item in zip(starts, items, strict=True):
                if item is not None:
                    yield offset + start, item
            offset += len(block)

    def _one_by_one(
        self, block: bytes, starts: list[int], decoder: msgspec.json.Decoder[Any]
    ) -> list[Any]:
        """A block with a line that is not a record: each line alone, the bad ones None
        (counted: the table names the file as changed)."""
        items: list[Any] = []
        for start, end in zip(starts, [*starts[1:], len(block)], strict=True):
            try:
                items.append(decoder.decode(b"[" + block[start : end - 1] + b"]")[0])
            except (msgspec.DecodeError, msgspec.ValidationError, IndexError):
                items.append(None)
                self.unreadable += 1
        return items


def _line_starts(block: bytes) -> list[int]:
    """Where each line of *block* (whole lines) starts."""
    starts = [0]
    at = block.find(b"\n")
    while at >= 0 and at + 1 < len(block):
        starts.append(at + 1)
        at = block.find(b"\n", at + 1)
    return starts


class _Shas:
    """Optional SHA-256 digests, 32 bytes each in one buffer (all zeros: none)."""

    NONE = bytes(32)

    def __init__(self, count: int) -> None:
        self.data = bytearray(32 * count)

    def set(self, at: int, sha: str | None) -> None:
        if sha:
            self.data[32 * at : 32 * at + 32] = bytes.fromhex(sha)

    def get(self, at: int) -> str | None:
        raw = bytes(self.data[32 * at : 32 * at + 32])
        return None if raw == self.NONE else raw.hex()


class TrialTable:
    """Every planned trial of one run, as columns (see the module docstring)."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.artifacts = ArtifactReader(run)
        self.problems: list[str] = []
        self.trial_ids: list[str] = []
        self.sample_ids: list[str] = []
        self.targets = _Codes()
        self.target_of = array("H")
        self.repetition = array("I")
        self.states = _Codes(PENDING)
        self.state_of = bytearray()
        self.statuses = _Codes(NOT_SCORED)
        self.scorers: list[str] = []
        self.status_of: dict[str, bytearray] = {}
        self.value_of: dict[str, array[float]] = {}
        self.score_at: dict[str, array[int]] = {}  # byte offset of each score line, or -1
        self._spans: tuple[array[int], array[int]] | None = None
        self.sample_sha = _Shas(0)
        self.output_sha = _Shas(0)
        self.medias = _Codes("text/plain")
        self.media_of = bytearray()
        self._sorted: dict[tuple[str, ...], list[int]] = {}
        self._lock = threading.Lock()
        self._spans_lock = threading.Lock()
        listed = _listed_digests(run)
        self._read_plan(listed)
        self._read_bundles(listed)
        self._read_scores(listed)

    def __len__(self) -> int:
        return len(self.trial_ids)

    def _check(self, chunks: _HashedChunks, name: str, listed: dict[str, str]) -> None:
        want = listed.get(name)
        if want is not None and want != "sha256:" + chunks.digest.hexdigest():
            self.problems.append(f"{name} does not match the digest in {MANIFEST}")
        if chunks.unreadable:
            self.problems.append(f"{name}: {chunks.unreadable} line(s) are not records")

    def _read_plan(self, listed: dict[str, str]) -> None:
        chunks = _HashedChunks(self.run / PLAN)
        samples: dict[str, str] = {}  # one string per sample, shared by its trials
        for plan in chunks.records(msgspec.json.Decoder(list[_PlanLine])):
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
        self.sample_sha, self.output_sha = _Shas(count), _Shas(count)

    def _read_bundles(self, listed: dict[str, str]) -> None:
        chunks = _HashedChunks(self.run / BUNDLES)
        count = len(self.trial_ids)
        for bundle in chunks.records(msgspec.json.Decoder(list[_BundleLine])):
            at = bundle.trial.index
            if 0 <= at < count:
                self.state_of[at] = self.states.code(bundle.state)
                self.sample_sha.set(at, bundle.artifacts.sample)
                self.output_sha.set(at, bundle.observation.output)
                self.media_of[at] = self.medias.code(bundle.observation.media)
        self._check(chunks, BUNDLES, listed)

    def _read_scores(self, listed: dict[str, str]) -> None:
        chunks = _HashedChunks(self.run / SCORES)
        count = len(self.trial_ids)
        for offset, score in chunks.placed_records(msgspec.json.Decoder(list[_ScoreLine])):
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
        self._check(chunks, SCORES, listed)

    # -- one trial's records ---------------------------------------------------------------

    def score_records(self, at: int) -> list[dict[str, Any]]:
        """The score records of the trial at plan position *at*, read at their offsets
        (``scores.jsonl`` was hashed against the manifest when the table was built)."""
        records = []
        with open_evidence(self.run / SCORES) as handle:
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
        """The bytes of ``events.jsonl`` that hold every event of the trial at *at*: from
        its first line to the end of its last. Found by one pass over the log the first
        time a trial page asks (kept: two integers a trial), not by a pass a page."""
        with self._spans_lock:  # not the queries' lock: pages go on while this scans
            if self._spans is None:
                self._spans = self._scan_spans()
            first, last = self._spans
        return first[at], last[at]

    def _scan_spans(self) -> tuple[array[int], array[int]]:
        count = len(self.trial_ids)
        first, last = array("q", [-1]) * count, array("q", [0]) * count
        position = {t: at for at, t in enumerate(self.trial_ids)}
        offset = 0
        for block in _HashedChunks(self.run / EVENTS).lines():
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
        keep = self._predicate(query)
        order = [at for at in range(len(self.trial_ids)) if keep(at)]
        sort = query.sort.lstrip("-")
        if sort != "index" or query.sort.startswith("-"):
            order.sort(key=self._sort_key(sort, query.scorer), reverse=query.sort.startswith("-"))
        with self._lock:
            if len(self._sorted) >= 16:
                self._sorted.pop(next(iter(self._sorted)))
            self._sorted[key] = order
        return order

    def _predicate(self, query: Query) -> Callable[[int], bool]:
        tests: list[Callable[[int], bool]] = []
        if query.target:
            target = self.targets.find(query.target)
            tests.append(lambda at: self.target_of[at] == target)
        if query.state:
            state = self.states.find(query.state)
            tests.append(lambda at: self.state_of[at] == state)
        if query.status:
            status = self.statuses.find(query.status)
            columns = [self.status_of[query.scorer]] if query.scorer in self.status_of else []
            columns = columns or ([] if query.scorer else list(self.status_of.values()))
            tests.append(lambda at: any(column[at] == status for column in columns))
        return lambda at: all(test(at) for test in tests)

    def _sort_key(self, sort: str, scorer: str) -> Callable[[int], Any]:
        if sort == "sample":
            return lambda at: (self.sample_ids[at], at)
        if sort == "target":
            return lambda at: (self.targets.names[self.target_of[at]], at)
        if sort == "state":
            return lambda at: (self.states.names[self.state_of[at]], at)
        if sort == "score":
            values = self.value_of.get(scorer or (self.scorers[0] if self.scorers else ""))
            if values is not None:
                return lambda at: (-math.inf if math.isnan(values[at]) else values[at], at)
        return lambda at: at

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
        record = loads(self.artifacts.read(sha))
        value = record.get("input") if isinstance(record, dict) else record
        text = as_text(value)
        if seen is not None:
            seen[sha] = text
        return text

    def _output_text(self, at: int) -> str:
        sha = self.output_sha.get(at)
        if sha is None:
            return ""
        data = self.artifacts.read(sha)
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


def as_text(value: Any) -> str:
    """A value as a row shows it: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def cut(text: str) -> str:
    """*text* cut to PREVIEW_CHARS for a row of the table."""
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"


def _listed_digests(run: Path) -> dict[str, str]:
    """The file digests a sealed manifest lists (none while the run is going)."""
    try:
        manifest = loads((run / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return {}
    files = manifest.get("files") if isinstance(manifest, dict) else None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


class TableCache:
    """One table per run, rebuilt when the run's files change (a run going on). A table
    is built by one thread at a time per run, outside the cache's lock: a page that only
    asks whether it is ready never waits for a build."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[Path, tuple[tuple[int, ...], TrialTable]] = {}
        self._building: dict[Path, tuple[tuple[int, ...], threading.Event]] = {}

    def ready(self, run: Path) -> TrialTable | None:
        """The run's table if it is built and current, else None (never waits)."""
        key = _version(run)
        with self._lock:
            cached = self._tables.get(run)
        return cached[1] if cached is not None and cached[0] == key else None

    def table(self, run: Path) -> TrialTable:
        """The run's table, built now if its files changed since it was last built (or
        waited for, if another thread is building it); the spans of its trials' events
        are then found on a background thread."""
        key = _version(run)
        with self._lock:
            cached = self._tables.get(run)
            if cached is not None and cached[0] == key:
                return cached[1]
            building = self._building.get(run)
            mine = building is None or building[0] != key
            if building is None or mine:
                building = self._building[run] = (key, threading.Event())
        if not mine:
            building[1].wait()
            return self.table(run)
        try:
            table = TrialTable(run)
            with self._lock:
                self._tables.pop(run, None)
                if len(self._tables) >= 4:  # a few runs at a time: each can be big
                    self._tables.pop(next(iter(self._tables)))
                self._tables[run] = (key, table)
        finally:
            with self._lock:
                if self._building.get(run) is building:
                    del self._building[run]
            building[1].set()
        threading.Thread(target=table.prepare_spans, name="assay-view-spans", daemon=True).start()
        return table

    def warm(self, run: Path) -> None:
        """Build the run's table on a background thread if it is not built (a run page
        does this: its sample table is the next page a reader opens)."""
        if self.ready(run) is None:
            threading.Thread(target=self._warm, args=(run,), daemon=True).start()

    def _warm(self, run: Path) -> None:
        # a compacted file that does not read back: the page that needs the table says so
        with contextlib.suppress(EvidenceError):
            self.table(run)


def _version(run: Path) -> tuple[int, ...]:
    key: list[int] = []
    for name in (MANIFEST, PLAN, BUNDLES, SCORES):
        try:
            file = run / name if (run / name).exists() else framed(run / name)
            stat = file.stat()
            key += [stat.st_mtime_ns, stat.st_size]
        except OSError:
            key += [0, 0]
    return tuple(key)
