"""``score`` and ``gate``: redo scoring and the gate from frozen evidence alone.

Nothing here can call a target. The run is verified first; evidence that does not verify
is refused. Bundles are then read back, each output artifact is read from the store, and
the same judging step the run used recomputes every score, which is compared with the
recorded ones.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from assay._digest import loads
from assay.errors import EvidenceError
from assay.evidence import (
    ARTIFACTS,
    BUNDLES,
    SCORES,
    SPEC,
    ArtifactStore,
    read_manifest,
    verify_run,
)
from assay.gate import GateDecision, decide
from assay.pipeline._judge import judge
from assay.pipeline._reports import build_report
from assay.report import Report, TrialRows
from assay.score import Metrics, MetricsBuilder, build_scorer
from assay.spec import EvalSpec


class Rescore(msgspec.Struct):
    """Scores recomputed from evidence, and how they compare with the recorded ones."""

    metrics: Metrics
    gate: GateDecision
    report: Report
    scores: int
    differing: list[str]


def rescore_run(path: Path) -> Rescore:
    """Verify the run at *path*, then recompute its scores, metrics, gate and report."""
    result = verify_run(path)
    if not result.ok:
        raise EvidenceError(
            "evidence.tampered",
            path=str(path),
            count=len(result.problems),
            first=result.problems[0],
        )
    manifest = read_manifest(path)
    spec = msgspec.json.decode((path / SPEC).read_bytes(), type=EvalSpec)
    scorers = {s.id: build_scorer(s) for s in spec.scorers}
    per_target = spec.dataset.samples * spec.repetitions
    metrics = MetricsBuilder({t.id: per_target for t in spec.targets}, list(scorers))
    rows = TrialRows(manifest["planned"])
    store = ArtifactStore(path / ARTIFACTS, write=False)
    recomputed: dict[str, tuple[str, str]] = {}
    with open(path / BUNDLES, "rb") as handle:
        for line in handle:
            bundle = loads(line)
            sha = bundle["observation"].get("output")
            output = store.get(sha) if sha else None
            records, row = judge(bundle, output, scorers, metrics)
            rows.add(row)
            for record in records:
                recomputed[record["score_id"]] = (record["status"], record["bundle_digest"])
    differing = _compare(path, recomputed)
    built = metrics.build()
    gate = decide(spec.gate, built, list(scorers))
    report = build_report(spec, manifest["status"], built, gate, rows)
    return Rescore(built, gate, report, len(recomputed), differing)


def _compare(path: Path, recomputed: dict[str, tuple[str, str]]) -> list[str]:
    """Score ids whose recorded status or bundle differs from the recomputed one."""
    differing = []
    seen = set()
    with open(path / SCORES, "rb") as handle:
        for line in handle:
            record = loads(line)
            key = record["score_id"]
            seen.add(key)
            if recomputed.get(key) != (record["status"], record["bundle_digest"]):
                differing.append(key)
    differing.extend(sorted(set(recomputed) - seen))
    return differing
