"""Find, verify and pair a baseline run for the ``no_regression`` policy.

The baseline is evidence like any other: it is verified in full (every digest, the hash
chain, every score's binding to its bundle) before one of its scores is read. A baseline
that is missing, not a run, unfinished or altered becomes a ``problem`` the gate reports
as ``inconclusive``; it is never silently skipped and never passes.

Targets are matched by id; when each run has a single target, with each other.

A sample id both runs have must name the same sample: the digest of the sample each
trial ran on is in its bundle (``artifacts.sample``). A shared id whose digest differs
(the dataset changed under the same id) makes the baseline unusable — its difference
would compare two questions — and the check inconclusive, naming the sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay._digest import loads
from assay.compare import compare_runs
from assay.errors import AssayError
from assay.evidence import BUNDLES, SPEC, read_manifest, score_records, verify_run
from assay.evidence._framed import open_evidence
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
    run: Path | Sequence[Path] | None = None,
    max_unpaired: int = 0,
) -> Regression:
    """Verify the run at *path* and pair its scores with *records* (the new run's).

    *targets* and *repetitions* are the new run's, *run* its folder (whose bundles name
    the samples it ran; or the folders of the shards a merge is joining; without it the
    samples are not checked). *records* is read once.
    """
    found = _verified(path)
    if found.problem is not None:
        return Regression(found)
    changed = changed_samples(path, run) if run is not None else None
    if changed:
        return Regression(Baseline(found.path, found.spec_digest, found.events_head, changed))
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
    return Regression(found, comparisons, {b: a for a, b in matches}, max_unpaired)


def sample_digests(run: Path | Sequence[Path]) -> dict[str, str]:
    """Each sample id of the run at *run* (or of the run folders *run*) → the digest of
    the sample its trials ran on."""
    from assay.evidence._shards import trial_files

    digests: dict[str, str] = {}
    files = trial_files(run, BUNDLES) if isinstance(run, Path) else [f / BUNDLES for f in run]
    for file in files:  # a merged run's: each shard's
        with open_evidence(file) as handle:
            for line in handle:
                bundle = loads(line)
                sample = (bundle.get("artifacts") or {}).get("sample")
                sample_id = (bundle.get("trial") or {}).get("sample_id")
                if sample is not None and sample_id is not None:
                    digests[str(sample_id)] = str(sample)
    return digests


def changed_sample_ids(run_a: Path, run_b: Path | Sequence[Path]) -> list[str]:
    """The sample ids both runs have whose sample digests differ, sorted."""
    ours = sample_digests(run_b)
    return sorted(
        sample
        for sample, digest in sample_digests(run_a).items()
        if ours.get(sample, digest) != digest
    )


def changed_samples(baseline: Path, run: Path | Sequence[Path]) -> str | None:
    """Why the two runs cannot be paired: a shared sample id naming different samples."""
    changed = changed_sample_ids(baseline, run)
    if not changed:
        return None
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return (
        f"the baseline {baseline} ran different samples under the same id "
        f"({', '.join(changed[:3])}{more}: their sample digests differ); "
        "re-run the baseline on this dataset"
    )


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
