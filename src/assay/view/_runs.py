"""The runs a viewer shows: found under one folder, summarised from their small files.

Why only small files: the run list is re-read on every request (so a run going on shows
its progress), and a run of 100,000 trials has an event log of hundreds of MB. A summary
reads ``manifest.json``, ``spec.json`` and ``report.json`` (all small, whatever the size
of the run); a run still going adds its finished-trial count, read incrementally from
the end of ``bundles.jsonl`` (only the bytes appended since the last request).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads
from assay.evidence import BUNDLES, MANIFEST, SPEC
from assay.evidence._framed import open_evidence, read_evidence
from assay.report import Report

REPORT_JSON = "report.json"


class RunSummary(msgspec.Struct):
    """One row of the run list."""

    name: str
    evaluation: str
    status: str
    gate: str
    targets: list[str]
    rates: list[tuple[str, str, float, float, float]]  # target, scorer, rate, low, high
    started_at: float
    planned: int
    finished: int
    problem: str = ""


def find_runs(root: Path) -> dict[str, Path]:
    """The runs under *root* by name: *root* itself if it is a run, else its folders that
    are (a run is a folder with a ``manifest.json`` or a ``spec.json``)."""
    if _is_run(root):
        return {root.resolve().name: root}
    try:
        children = sorted(root.iterdir())
    except OSError:
        return {}
    return {child.name: child for child in children if child.is_dir() and _is_run(child)}


def _is_run(folder: Path) -> bool:
    return (folder / MANIFEST).is_file() or (folder / SPEC).is_file()


class _Count:
    """How many whole lines of a growing file were counted, up to which byte."""

    __slots__ = ("lines", "offset")

    def __init__(self) -> None:
        self.lines = 0
        self.offset = 0


class RunCatalog:
    """Summaries of the runs under a folder, with a parsed report cached per file version."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._reports: dict[Path, tuple[tuple[int, int], Report | None]] = {}
        self._counts: dict[Path, _Count] = {}

    def runs(self) -> dict[str, Path]:
        """The runs, found afresh (a run started since the last request is listed)."""
        return find_runs(self.root)

    def summaries(self) -> list[RunSummary]:
        """Every run, newest first."""
        found = [self.summary(name, path) for name, path in self.runs().items()]
        return sorted(found, key=lambda run: (-run.started_at, run.name))

    def summary(self, name: str, path: Path) -> RunSummary:
        """One run's row, from its manifest, spec and report (when it has one)."""
        manifest = _json_or_none(path / MANIFEST) or {}
        spec = _json_or_none(path / SPEC) or {}
        report = self.report(path)
        status = str(manifest.get("status") or "not started")
        planned = int(manifest.get("planned") or (report.planned if report else 0))
        finished = planned if status == "complete" else self._finished(path)
        return RunSummary(
            name=name,
            evaluation=str(manifest.get("evaluation") or spec.get("evaluation") or name),
            status=status,
            gate=report.gate.status if report else ("running" if status == "running" else "-"),
            targets=[str(t.get("id")) for t in spec.get("targets") or []] or _targets(report),
            rates=_rates(report),
            started_at=float(manifest.get("started_at") or 0.0),
            planned=planned,
            finished=finished,
            problem="" if manifest else "manifest.json is missing or unreadable",
        )

    def report(self, path: Path) -> Report | None:
        """The run's ``report.json`` as a Report (parsed once per version of the file)."""
        file = path / REPORT_JSON
        try:
            stat = file.stat()
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._reports.get(path)
            if cached is not None and cached[0] == key:
                return cached[1]
        try:
            report: Report | None = msgspec.json.decode(read_evidence(file), type=Report)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            report = None
        with self._lock:
            self._reports[path] = (key, report)
        return report

    def _finished(self, path: Path) -> int:
        """Whole lines in ``bundles.jsonl`` (one a finished trial), reading only new bytes."""
        with self._lock:
            count = self._counts.setdefault(path, _Count())
            try:
                with open_evidence(path / BUNDLES) as handle:
                    if handle.seek(0, 2) < count.offset:  # rewritten (a resume): start over
                        count.lines = count.offset = 0
                    handle.seek(count.offset)
                    data = handle.read()
            except OSError:
                return 0
            whole = data.rfind(b"\n") + 1
            count.lines += data.count(b"\n", 0, whole)
            count.offset += whole
            return count.lines


def _json_or_none(path: Path) -> dict[str, Any] | None:
    try:
        value = loads(read_evidence(path))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _targets(report: Report | None) -> list[str]:
    return list(report.targets) if report else []


def _rates(report: Report | None) -> list[tuple[str, str, float, float, float]]:
    if report is None:
        return []
    return [
        (e.target_id, e.scorer_id, e.value, e.ci_low, e.ci_high) for e in report.metrics.estimates
    ]
