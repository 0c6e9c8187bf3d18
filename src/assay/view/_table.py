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

import hashlib
import math
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads
from assay.evidence import BUNDLES, MANIFEST, PLAN, SCORES, decode_output
from assay.view._artifacts import read_artifact

PENDING = "pending"
NOT_SCORED = "-"
PREVIEW_CHARS = 160
PER_PAGE = 50
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


class _HashedLines:
    """The whole lines of a file, hashing every byte read (to compare with the manifest)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()

    def __iter__(self) -> Iterator[bytes]:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with handle:
            for line in handle:
                self.digest.update(line)
                if line.endswith(b"\n"):
                    yield line


class TrialTable:
    """Every planned trial of one run, as columns (see the module docstring)."""

    def __init__(self, run: Path) -> None:
        self.run = run
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
        self.sample_sha: list[str | None] = []
        self.output: list[tuple[str, str] | None] = []
        self._sorted: dict[tuple[str, ...], list[int]] = {}
        self._lock = threading.Lock()
        listed = _listed_digests(run)
        self._read_plan(listed)
        self._read_bundles(listed)
        self._read_scores(listed)

    def __len__(self) -> int:
        return len(self.trial_ids)

    def _check(self, lines: _HashedLines, name: str, listed: dict[str, str]) -> None:
        want = listed.get(name)
        if want is not None and want != "sha256:" + lines.digest.hexdigest():
            self.problems.append(f"{name} does not match the digest in {MANIFEST}")

    def _read_plan(self, listed: dict[str, str]) -> None:
        decode = msgspec.json.Decoder(_PlanLine).decode
        lines = _HashedLines(self.run / PLAN)
        for line in lines:
            plan = decode(line)
            if plan.index != len(self.trial_ids):
                self.problems.append(f"{PLAN}: trial {plan.index} is out of order")
                break
            self.trial_ids.append(plan.trial_id)
            self.sample_ids.append(str(plan.sample_id))
            self.target_of.append(self.targets.code(plan.target_id))
            self.repetition.append(plan.repetition)
        self._check(lines, PLAN, listed)
        count = len(self.trial_ids)
        self.state_of = bytearray(count)
        self.sample_sha = [None] * count
        self.output = [None] * count

    def _read_bundles(self, listed: dict[str, str]) -> None:
        decode = msgspec.json.Decoder(_BundleLine).decode
        lines = _HashedLines(self.run / BUNDLES)
        for line in lines:
            bundle = decode(line)
            at = bundle.trial.index
            if 0 <= at < len(self.trial_ids):
                self.state_of[at] = self.states.code(bundle.state)
                self.sample_sha[at] = bundle.artifacts.sample
                seen = bundle.observation
                self.output[at] = (seen.output, seen.media) if seen.output else None
        self._check(lines, BUNDLES, listed)

    def _read_scores(self, listed: dict[str, str]) -> None:
        decode = msgspec.json.Decoder(_ScoreLine).decode
        lines = _HashedLines(self.run / SCORES)
        count = len(self.trial_ids)
        for line in lines:
            score = decode(line)
            if not 0 <= score.index < count:
                continue
            if score.scorer_id not in self.status_of:
                self.scorers.append(score.scorer_id)
                self.status_of[score.scorer_id] = bytearray(count)
                self.value_of[score.scorer_id] = array("d", [math.nan]) * count
            self.status_of[score.scorer_id][score.index] = self.statuses.code(score.status)
            value = score.value
            self.value_of[score.scorer_id][score.index] = math.nan if value is None else value
        self._check(lines, SCORES, listed)

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
        sha = self.sample_sha[at]
        if sha is None:
            return ""
        if seen is not None and sha in seen:
            return seen[sha]
        record = loads(read_artifact(self.run, sha))
        value = record.get("input") if isinstance(record, dict) else record
        text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
        if seen is not None:
            seen[sha] = text
        return text

    def _output_text(self, at: int) -> str:
        output = self.output[at]
        if output is None:
            return ""
        data = read_artifact(self.run, output[0])
        try:
            value = decode_output(data, output[1])
        except ValueError:
            return data.decode("utf-8", errors="replace")
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            answer = (value.get("output") or {}).get("message") or {}
            value = answer.get("content", "")
        return value if isinstance(value, str) else msgspec.json.encode(value).decode()

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
            row.input = _cut(self._input_text(at))
            row.output = _cut(self._output_text(at))
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


def _cut(text: str) -> str:
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
    """One table per run, rebuilt when the run's files change (a run going on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[Path, tuple[tuple[int, ...], TrialTable]] = {}

    def table(self, run: Path) -> TrialTable:
        """The run's table, built now if its files changed since it was last built."""
        key = _version(run)
        with self._lock:
            cached = self._tables.get(run)
            if cached is not None and cached[0] == key:
                return cached[1]
            table = TrialTable(run)
            if len(self._tables) >= 4:  # a few runs at a time: each can be big
                self._tables.pop(next(iter(self._tables)))
            self._tables[run] = (key, table)
            return table


def _version(run: Path) -> tuple[int, ...]:
    key: list[int] = []
    for name in (MANIFEST, PLAN, BUNDLES, SCORES):
        try:
            stat = (run / name).stat()
            key += [stat.st_mtime_ns, stat.st_size]
        except OSError:
            key += [0, 0]
    return tuple(key)
