"""The listed trials' details read while the run goes on, not after its last answer.

report.html opens each listed trial on its texts (``_details``), read back from the
bundles and artifacts. At the end of a run that is a pass over every bundle line (the
listed trials' lines decoded) and a read of their artifacts: about 20 ms of CPU at
5,000 trials, on the path from the last answer to the sealed run. While the trials
wait on a model the process has CPU to spare, so ``DetailsAhead`` reads the lines
written since its last look, keeping the details of the trials listed at that moment
and making their HTML rows; the end reads only what was written after the last look.

A fresh run need not read its bundle lines back at all: its trials are sealed by this
process, so the run hands over the line of each trial the report lists as it is judged
(``offer``), and no look or end reads the file (at 100,000 trials the looks read 95 MB
of lines back, about 3 % of a trivial run's CPU). A resumed run's earlier trials were
sealed by another process: it reads the file, look by look.

The page must not change by a byte: a kept detail is always made from its trial's
last line in the file (a later line of a trial no longer listed drops what was kept),
and whenever a listed trial has none kept, or a look failed, the end reads every
detail as ``read_details`` does; a row made ahead is used only if made of the same row
and detail as the end's (``_html.trial_rows``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from assay.report._details import (
    TrialDetail,
    _Shown,
    _shown,
    details_of,
    read_details,
    shown_bundles,
)

if TYPE_CHECKING:
    from assay.evidence._store import ArtifactStore
    from assay.report._html import RowsMade
    from assay.report._model import TrialRow

CHUNK = 1 << 20
"""Bytes of bundle lines read at a time."""

FETCH_AT = 256
"""Shown bundles gathered before a look reads their artifacts: each read scans the
store's index of every artifact, so a run whose listed trials trickle in (failures past
the cap) does it a bounded number of times; the rest is read at the end."""

SETTLED_FETCHES = 2
"""Looks that read fewer than ``FETCH_AT`` gathered bundles because none came since the
look before (the list is full: a run's first ``MAX_TRIAL_ROWS`` passing trials, then
nothing). At most this many a run, so a trickle still costs a bounded number of scans;
without them, up to ``FETCH_AT - 1`` trials' artifacts waited for the end (12 ms of a
5,000-trial network run's 60 ms end)."""


SLICE = 32
"""HTML rows made between two pauses of a look (``looking``): about 1 ms of CPU."""

FETCH_SLICE = 64
"""Trials whose artifacts one pause's read fetches: each read scans the pack's index,
so larger than ``SLICE``, and about 2 ms of CPU."""


class DetailsAhead:
    """The details of a live run's listed trials, gathered look by look."""

    def __init__(self, run: Path, store: ArtifactStore, handed: bool = False) -> None:
        from assay.evidence._layout import BUNDLES

        self.handed = handed  # the listed trials' lines come by ``offer``, not the file
        self.run = run
        self.store = store
        self.bundles = run / BUNDLES
        self.read_to = 0  # bytes of bundles.jsonl read (whole lines)
        self.seen = 0  # its size at the previous look
        self.shown: dict[str, _Shown] = {}  # lines read, their artifacts not yet
        self.details: dict[str, TrialDetail] = {}
        self.made: RowsMade = {}  # the listed trials' HTML, made once their details are
        self.broken = False
        self._gathered = 0  # len(shown) after the previous look
        self._settled = 0  # looks that read a settled remainder (SETTLED_FETCHES)

    def look(self, rows: list[TrialRow]) -> None:
        """``looking``, whole (no pause between its slices)."""
        for _ in self.looking(rows):
            pass

    def looking(self, rows: list[TrialRow]) -> Iterator[None]:
        """Read the lines that were in the file at the previous look (a trial's row is
        added when it is judged, after its line is queued, so a line is read once its
        trial has had a look's time to be judged; a slower one is read at the end), and
        make the HTML of the listed *rows* whose details are read: ``SLICE`` trials at a
        time, pausing (a ``yield``) after each, so the caller lets the loop run between
        them (a look made in one go held a network run's loop for up to 18 ms, its
        answers waiting)."""
        listed = {row.trial_id for row in rows}
        if not self.handed:
            upto, self.seen = self.seen, self._size()
            self._read(listed, upto)
        if self._fetching():
            while self.shown and not self.broken:
                self._fetch(FETCH_SLICE)
                yield
        self._gathered = len(self.shown)
        if not self.broken:
            yield from self._make(rows, listed)

    def idle(self) -> bool:
        """Whether a look would only make again what the last one made, the listed rows
        being the same: the lines come by ``offer`` and none is gathered unread."""
        return self.handed and not self.shown

    def _fetching(self) -> bool:
        """Whether this look reads the gathered bundles' artifacts: ``FETCH_AT`` of
        them, or a remainder none was added to since the look before (a few times)."""
        gathered = len(self.shown)
        if gathered >= FETCH_AT:
            return True
        if gathered and gathered == self._gathered and self._settled < SETTLED_FETCHES:
            self._settled += 1
            return True
        return False

    def finish(self, listed: set[str]) -> dict[str, TrialDetail]:
        """The details of the *listed* trials, once every line is in the file: the
        lines after the last look read now, or everything read again (as
        ``read_details``) if a look failed or a listed trial was missed."""
        if not self.handed:
            self._read(listed, None)
        self._fetch()
        if self.broken or not listed <= self.details.keys():
            return read_details(self.run, listed, self.store)
        return {trial_id: self.details[trial_id] for trial_id in listed}

    def offer(self, line: bytes) -> None:
        """The bundle *line* (as written) of a trial the report lists as it is judged;
        a later look reads its artifacts and makes its row."""
        try:
            bundle = _shown.decode(line)
        except msgspec.DecodeError:  # cannot happen to a line this run wrote
            self.broken = True
            return
        trial_id = bundle.trial.trial_id
        self.details.pop(trial_id, None)
        self.shown[trial_id] = bundle

    def _read(self, listed: set[str], upto: int | None) -> None:
        """Read the whole lines from ``read_to`` up to byte *upto* (the end if None):
        keep the listed trials' bundles, drop what was kept of a trial no longer
        listed that has a later line (its kept detail is then not its last)."""
        if self.broken or (upto is not None and upto <= self.read_to):
            return
        wanted = listed | self.details.keys() | self.shown.keys()
        try:
            with open(self.bundles, "rb") as handle:
                for lines in self._lines(handle, upto):
                    self._keep(shown_bundles(lines, wanted), listed)
        except (OSError, ValueError, KeyError):
            self.broken = True

    def _lines(self, handle: BinaryIO, upto: int | None) -> Iterator[list[bytes]]:
        """The whole lines from ``read_to`` up to byte *upto* (the end if None), about
        ``CHUNK`` bytes at a time (a look may find a second's lines: read whole, they
        and their copies would raise a big run's peak memory)."""
        size = CHUNK
        while upto is None or self.read_to < upto:
            handle.seek(self.read_to)
            data = handle.read(size if upto is None else min(size, upto - self.read_to))
            whole = data.rfind(b"\n") + 1
            if not whole:  # a line longer than the chunk, or a torn end: no whole line
                if len(data) < size:
                    return
                size *= 2
                continue
            self.read_to += whole
            size = CHUNK
            yield data[:whole].splitlines(keepends=True)

    def _keep(self, shown: list[_Shown], listed: set[str]) -> None:
        """Keep the *shown* bundles of *listed* trials; forget a trial's earlier one."""
        for bundle in shown:
            trial_id = bundle.trial.trial_id
            self.details.pop(trial_id, None)
            if trial_id in listed:
                self.shown[trial_id] = bundle
            else:
                self.shown.pop(trial_id, None)

    def _fetch(self, most: int | None = None) -> None:
        """Make the details of the bundles gathered (their artifacts read at once): all
        of them, or the *most* gathered first."""
        if self.broken or not self.shown:
            return
        if most is None or len(self.shown) <= most:
            shown = list(self.shown.values())
            self.shown.clear()
        else:
            shown = [self.shown.pop(trial_id) for trial_id in list(self.shown)[:most]]
        made = details_of(shown, self.store)
        if len(made) < len(shown):  # an artifact could not be read: say so at the end
            self.broken = True
        self.details.update(made)

    def _make(self, rows: list[TrialRow], listed: set[str]) -> Iterator[None]:
        """The HTML of the listed *rows* whose details are read (a row made of another
        row or detail than the end's is made again there), pausing every ``SLICE``."""
        from assay.report._html import trial_row

        for gone in self.made.keys() - listed:
            del self.made[gone]
        made = 0
        for row in rows:
            detail = self.details.get(row.trial_id)
            if detail is not None and row.trial_id not in self.made:
                self.made[row.trial_id] = (row, detail, trial_row(row, detail))
                made += 1
                if not made % SLICE:
                    yield

    def _size(self) -> int:
        try:
            return self.bundles.stat().st_size
        except OSError:
            self.broken = True
            return 0
