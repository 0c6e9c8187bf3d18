"""``merge``: join the shards of a sharded run into one run, gated over their union.

Each shard is checked (a shard run, sealed complete, verifying), the set is checked
(one spec digest, one split, every part once: ``shard_set_problems``), then each shard is
copied whole into the merged run as ``shards/K``, so the merged run can be moved, signed
and verified on its own. Every finished trial of every shard is judged again from its
bundle (as ``assay score`` does, grader calls answered from that shard's events), into
one set of metrics over the whole plan; the gate, the reports and a short event chain
pinning each shard's manifest digest and chain head are written as a run's are.
"""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from assay import __version__
from assay._digest import canonical_json, file_sha256, sha256_hex
from assay._messages import say
from assay.errors import EvidenceError, RunError
from assay.evidence import (
    EVENTS,
    MANIFEST,
    MANIFEST_SCHEMA,
    PLAN,
    SPEC,
    read_manifest,
    score_records,
    verify_run,
)
from assay.evidence._framed import compact, compact_threshold, open_evidence
from assay.evidence._layout import LOCK
from assay.evidence._log import EventLog, FileSink
from assay.evidence._rundir import write_atomic
from assay.evidence._shards import SHARDS, shard_set_problems
from assay.gate import GateDecision, decide
from assay.model import models_built
from assay.pipeline._baseline import regression_of
from assay.pipeline._conclude import gate_event
from assay.pipeline._prepared import close_parts
from assay.pipeline._reports import build_report
from assay.pipeline._rescore import judge_folder, scorers_of
from assay.pipeline._sync import synchronous
from assay.report import Report, TrialRows, to_html, to_json, to_markdown
from assay.report._details import read_details
from assay.score import Metrics, MetricsBuilder
from assay.spec import EvalSpec


class Merged(msgspec.Struct):
    """A merged run: where it is, and its metrics, gate and report over every shard."""

    path: Path
    metrics: Metrics
    gate: GateDecision
    report: Report


def refused(key: str, **params: object) -> EvidenceError:
    """The one-line refusal of a merge (exit 4), saying the first thing wrong."""
    return EvidenceError("merge.refused", reason=say(key, **params))


def check_shards(shards: list[Path]) -> list[dict[str, Any]]:
    """The manifests of *shards*, once they are shown to make one whole run: each a run,
    the set complete and disjoint, each verifying. EvidenceError otherwise."""
    manifests = [read_manifest(path) for path in shards]
    problems = shard_set_problems([(str(p), m) for p, m in zip(shards, manifests, strict=True)])
    if problems:
        key, params = problems[0]
        raise refused(key, **params)
    for path in shards:
        result = verify_run(path)
        if not result.ok:
            first, count = result.problems[0], len(result.problems)
            raise refused("merge.bad_shard", path=str(path), first=first, count=count)
    return manifests


async def merge_runs_async(
    shards: list[Path], output: Path, baseline: Path | None = None
) -> Merged:
    """Merge the shard runs *shards* into a new run at *output*; *baseline* is the run a
    ``no_regression`` gate compares with (default: the spec's)."""
    manifests = check_shards(shards)
    _claim(output)
    try:
        return await _merge(shards, manifests, output, baseline)
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)  # ours, made just now: leave nothing half-made
        raise


def _claim(output: Path) -> None:
    """Create the merged run's folder; a folder already there (even empty) is refused,
    since a failed merge removes the folder it made."""
    try:
        output.mkdir(parents=True)
    except FileExistsError:
        raise RunError("run.exists", path=str(output)) from None
    except OSError as exc:
        raise RunError.storage(output, exc) from exc


async def _merge(
    shards: list[Path], manifests: list[dict[str, Any]], output: Path, baseline: Path | None
) -> Merged:
    started = time.time()
    copies = _copy_shards(shards, manifests, output)
    pins = [_pin(output, relative) for relative in copies]
    first = output / copies[0]
    shutil.copyfile(first / SPEC, output / SPEC)
    with open_evidence(first / PLAN) as plan, open(output / PLAN, "wb") as out:
        shutil.copyfileobj(plan, out)  # a shard's plan may be compacted: copy its bytes
    spec = msgspec.json.decode((output / SPEC).read_bytes(), type=EvalSpec)
    folders = [output / relative for relative in copies]
    metrics, rows = await _judge_shards(spec, folders, manifests[0]["planned"])
    log = EventLog([FileSink(output / EVENTS)])
    log.append(None, 1, None, "run_merged", {"shards": pins})
    built = metrics.build()
    spec_folder = _spec_folder(manifests[0])
    regression = regression_of(spec, spec_folder, baseline, _scores(folders), folders)
    gate = decide(spec.gate, built, [s.id for s in spec.scorers], regression)
    log.append(None, 2, 1, "metrics", msgspec.to_builtins(built))
    log.append(None, 3, 1, "gate", gate_event(gate))
    report = build_report(spec, "complete", built, gate, rows, {}, _scores(folders))
    files = {PLAN: "sha256:" + file_sha256(output / PLAN)}  # its logical bytes
    compact(output / PLAN, compact_threshold())  # as a run's at seal (its one big file)
    for name, data in _render(report, folders).items():
        (output / name).write_bytes(data)
        files[name] = "sha256:" + sha256_hex(data)
    fields = {
        "status": "complete",
        "evaluation": spec.evaluation,
        "spec_digest": manifests[0]["spec_digest"],
        "spec_source": manifests[0].get("spec_source"),
        "planned": manifests[0]["planned"],
        "files": files,
        "shards": pins,
        "assay_version": __version__,
        "started_at": round(started, 3),
        "finished_at": round(time.time(), 3),
    }
    log.append(None, 4, 1, "run_finished", fields)
    log.close()
    manifest = {**fields, "schema": MANIFEST_SCHEMA, "events": log.count, "events_head": log.head}
    write_atomic(output / MANIFEST, canonical_json(manifest))  # last: a merged run now
    return Merged(output, built, gate, report)


def _copy_shards(shards: list[Path], manifests: list[dict[str, Any]], output: Path) -> list[str]:
    """Copy each shard whole to ``shards/K`` (its lock file left behind); the copies'
    relative paths, in part order. A copy must be byte for byte the shard verified."""
    order = sorted(zip(shards, manifests, strict=True), key=lambda s: s[1]["shard"]["index"])
    copies = []
    for path, manifest in order:
        relative = f"{SHARDS}/{manifest['shard']['index']}"
        target = output / relative
        shutil.copytree(path, target, ignore=shutil.ignore_patterns(LOCK, ".*.tmp"))
        if canonical_json(read_manifest(target)) != canonical_json(manifest):
            raise refused("merge.bad_shard", path=str(path), first="changed while copied", count=1)
        copies.append(relative)
    return copies


def _pin(output: Path, relative: str) -> dict[str, Any]:
    """What the merged run's chain binds of a shard: its place, part, the SHA-256 of its
    manifest (which pins every file of the shard) and its chain head."""
    manifest = read_manifest(output / relative)
    return {
        "path": relative,
        "index": manifest["shard"]["index"],
        "count": manifest["shard"]["count"],
        "manifest": "sha256:" + file_sha256(output / relative / MANIFEST),
        "events_head": manifest["events_head"],
    }


async def _judge_shards(
    spec: EvalSpec, folders: list[Path], planned: int
) -> tuple[MetricsBuilder, TrialRows]:
    """Every shard's trials judged from their bundles into one set of metrics over the
    whole plan (grader calls replayed from each shard's own events)."""
    scorers, task_metrics = scorers_of(spec)
    per_target = spec.dataset.samples * spec.repetitions
    metrics = MetricsBuilder(
        {t.id: per_target for t in spec.targets},
        list(scorers),
        spec.repetitions,
        spec.gate.confidence_level,
    )
    rows = TrialRows(planned)
    made: list[Any] = []
    try:
        with models_built() as made:
            for folder in folders:
                async for _ in judge_folder(folder, scorers, metrics, rows, task_metrics):
                    pass
    finally:
        await close_parts([*scorers.values(), *made])
    return metrics, rows


def _scores(folders: list[Path]) -> Iterator[dict[str, Any]]:
    """The shards' score records, one shard after another."""
    return itertools.chain.from_iterable(score_records(folder) for folder in folders)


def _render(report: Report, folders: list[Path]) -> dict[str, bytes]:
    """The three reports; the HTML's trials open on texts read from their shards."""
    wanted = {row.trial_id for row in report.trials}
    details: dict[str, Any] = {}
    for folder in folders:
        details.update(read_details(folder, wanted))
    return {
        "report.json": to_json(report),
        "report.md": to_markdown(report).encode("utf-8"),
        "report.html": to_html(report, details).encode("utf-8"),
    }


def _spec_folder(manifest: dict[str, Any]) -> Path | None:
    source = manifest.get("spec_source")
    return Path(source).parent if source not in (None, "", "None") else None


merge_runs = synchronous(merge_runs_async, "merge_runs")
