"""The viewer's tables, one per run, rebuilt when the run's files change."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from assay.errors import EvidenceError
from assay.evidence import BUNDLES, MANIFEST, PLAN, SCORES
from assay.evidence._framed import framed
from assay.view._table import TrialTable


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
