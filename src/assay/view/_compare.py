"""Two runs compared: the paired comparison ``assay compare`` prints, flipped samples
side by side, each side linking to its trial.

Both runs' verdicts are shown as banners (a comparison of evidence that does not verify
compares nothing); the score records are streamed into ``assay.compare.compare_runs``
as the CLI does, and each flipped pair is looked up in the two runs' trial tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assay._digest import loads
from assay.compare import PairedComparison
from assay.evidence import SCORES, SPEC
from assay.evidence._framed import open_evidence, read_evidence
from assay.view._rows import Row
from assay.view._table import TrialTable
from assay.view._verified import Verdict

if TYPE_CHECKING:
    from assay.view._app import Viewer


class FlipRow(msgspec.Struct):
    """One flipped pair: the sample, and each run's trial (None if it cannot be found)."""

    sample_id: str
    repetition: int
    a: str
    b: str
    trial_a: Row | None
    trial_b: Row | None


class ComparePage(msgspec.Struct):
    """What the compare page shows."""

    a: str
    b: str
    verdict_a: Verdict
    verdict_b: Verdict
    comparisons: list[PairedComparison]
    flips: list[list[FlipRow]]
    problem: str = ""


def compare_page(viewer: Viewer, a: str, path_a: Path, b: str, path_b: Path) -> ComparePage:
    """Compare run *b* against run *a* (targets paired by id, or the only target of each)."""
    from assay.compare import compare_runs

    summaries = [viewer.catalog.summary(name, path) for name, path in ((a, path_a), (b, path_b))]
    verdicts = [
        viewer.verdicts.verdict(path, run.status, run.planned)
        for run, path in zip(summaries, (path_a, path_b), strict=True)
    ]
    spec_a, spec_b = _spec(path_a), _spec(path_b)
    matches = _matches(spec_a, spec_b)
    if not matches:
        problem = "the runs share no target id and do not have one target each"
        return ComparePage(a, b, verdicts[0], verdicts[1], [], [], problem)
    repetitions = (int(spec_a.get("repetitions", 1)), int(spec_b.get("repetitions", 1)))
    comparisons = compare_runs(
        _records(path_a), _records(path_b), matches, 0.95, repetitions, labels=("", "")
    )
    table_a, table_b = viewer.tables.table(path_a), viewer.tables.table(path_b)
    flips = [_flips(c, table_a, table_b) for c in comparisons]
    return ComparePage(a, b, verdicts[0], verdicts[1], comparisons, flips)


def _spec(run: Path) -> dict[str, Any]:
    try:
        spec = loads(read_evidence(run / SPEC))
    except (OSError, ValueError):
        return {}
    return spec if isinstance(spec, dict) else {}


def _matches(spec_a: dict[str, Any], spec_b: dict[str, Any]) -> list[tuple[str, str]]:
    """The same pairing as ``assay compare``: shared target ids, or the one target of each."""
    targets_a = [str(t.get("id")) for t in spec_a.get("targets") or []]
    targets_b = [str(t.get("id")) for t in spec_b.get("targets") or []]
    common = [t for t in targets_a if t in targets_b]
    if common:
        return [(t, t) for t in common]
    if len(targets_a) == 1 and len(targets_b) == 1:
        return [(targets_a[0], targets_b[0])]
    return []


def _records(run: Path) -> Iterator[dict[str, Any]]:
    try:
        handle = open_evidence(run / SCORES)
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            if line.endswith(b"\n"):
                yield loads(line)


def _flips(c: PairedComparison, table_a: TrialTable, table_b: TrialTable) -> list[FlipRow]:
    return [
        FlipRow(
            sample_id=f.sample_id,
            repetition=f.repetition,
            a=f.a,
            b=f.b,
            trial_a=_find(table_a, c.a, f.sample_id, f.repetition),
            trial_b=_find(table_b, c.b, f.sample_id, f.repetition),
        )
        for f in c.flipped
    ]


def _find(table: TrialTable, target: str, sample_id: str, repetition: int) -> Row | None:
    at = table.find(target, sample_id, repetition)
    return None if at is None else table.row(at, previews=True)
