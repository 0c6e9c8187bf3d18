"""Find, verify and pair a baseline run for the ``no_regression`` policy.

The baseline is evidence like any other: it is verified in full (every digest, the hash
chain, every score's binding to its bundle) before one of its scores is read. A baseline
that is missing, not a run, unfinished or altered becomes a ``problem`` the gate reports
as ``inconclusive``; it is never silently skipped and never passes.

Targets are matched by id; when each run has a single target, with each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay._digest import loads
from assay.compare import compare_runs
from assay.errors import AssayError
from assay.evidence import SPEC, read_manifest, score_records, verify_run
from assay.gate._regression import Baseline, Regression

BASELINE_LABEL = "baseline:"


def no_baseline() -> Regression:
    """The regression input when no baseline was declared or given."""
    problem = "no baseline run: declare gate.no_regression.baseline or pass --baseline RUN"
    return Regression(Baseline("", problem=problem))


def compare_with_baseline(
    path: Path,
    records: Iterable[dict[str, Any]],
    targets: list[str],
    repetitions: int,
    level: float,
) -> Regression:
    """Verify the run at *path* and pair its scores with *records* (the new run's).

    *targets* and *repetitions* are the new run's. *records* is read once.
    """
    found = _verified(path)
    if found.problem is not None:
        return Regression(found)
    spec = loads((path / SPEC).read_bytes())
    matches = _matches([t["id"] for t in spec["targets"]], targets)
    if not matches:
        problem = f"the baseline {path} has none of the targets {', '.join(targets)}"
        return Regression(Baseline(found.path, found.spec_digest, found.events_head, problem))
    comparisons = compare_runs(
        score_records(path),
        records,
        matches,
        level,
        (int(spec.get("repetitions", 1)), repetitions),
        labels=(BASELINE_LABEL, ""),
    )
    return Regression(found, comparisons, {b: a for a, b in matches})


def _verified(path: Path) -> Baseline:
    shown = str(path)
    try:
        manifest = read_manifest(path)
        result = verify_run(path)
    except AssayError as exc:
        return Baseline(shown, problem=f"the baseline {shown} cannot be used: {exc.one_line()}")
    head = manifest.get("events_head")
    found = Baseline(shown, manifest.get("spec_digest"), head)
    if not result.ok:
        problem = (
            f"the baseline {shown} does not verify ({len(result.problems)} problem(s), "
            f"first: {result.problems[0]}); its scores are not used"
        )
        return Baseline(shown, found.spec_digest, head, problem)
    if manifest.get("status") != "complete":
        problem = f"the baseline {shown} is {manifest.get('status')}, not complete"
        return Baseline(shown, found.spec_digest, head, problem)
    return found


def _matches(baseline_targets: list[str], targets: list[str]) -> list[tuple[str, str]]:
    common = [t for t in targets if t in baseline_targets]
    if common:
        return [(t, t) for t in common]
    if len(baseline_targets) == 1 and len(targets) == 1:
        return [(baseline_targets[0], targets[0])]
    return []
