"""``score`` and ``gate``: redo scoring and the gate from frozen evidence alone.

Nothing here can call a target. The run is verified first; evidence that does not verify
is refused. Bundles are then read back, each output artifact is read from the store, and
the same judging step the run used recomputes every score, which is compared with the
recorded ones. A Python task's scorers are rebuilt from the task file the spec pins
(by name, arguments and digest); a changed task file is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import canonical_json, loads, sha256_hex
from assay.approval._apply import rebuild_policies
from assay.dataset import Dataset, freeze, select
from assay.errors import ConfigError, EvidenceError
from assay.evidence import (
    ARTIFACTS,
    BUNDLES,
    PLAN,
    REGATES,
    SCORES,
    SPEC,
    ArtifactStore,
    read_manifest,
    verify_run,
)
from assay.evidence._framed import open_evidence
from assay.evidence._shards import trial_folders
from assay.gate import GateDecision, decide
from assay.gate._sequential import Monitor, look_event, replay_looks, sequential_gate
from assay.model import Model, models_built, replay_scope
from assay.model._registry import ModelRoles, model_roles_scope
from assay.pipeline._baseline import baseline_path, check_baseline_option, regression_of
from assay.pipeline._judge import judge
from assay.pipeline._prepared import close_parts
from assay.pipeline._replay import replay_of_run
from assay.pipeline._reports import build_report
from assay.pipeline._sync import synchronous
from assay.pipeline._task_metrics import MetadataOf, TaskMetricsBuilder
from assay.pipeline._task_prepare import task_scorers
from assay.report import Report, TrialRows
from assay.score import AnyScorer, Metrics, MetricsBuilder, build_scorer
from assay.spec import EvalSpec
from assay.task import Task, load_tasks


class Rescore(msgspec.Struct):
    """Scores recomputed from evidence, and how they compare with the recorded ones."""

    metrics: Metrics
    gate: GateDecision
    report: Report
    scores: int
    differing: list[str]


async def rescore_run_async(path: Path, baseline: Path | None = None) -> Rescore:
    """Verify the run at *path*, then recompute its scores, metrics, gate and report.

    *baseline* is the run a ``no_regression`` policy compares with (default: the spec's
    ``baseline``, inside the folder the spec was run from).
    """
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
    check_baseline_option(spec, baseline)
    scorers, task_metrics = scorers_of(spec)
    per_target = spec.dataset.samples * spec.repetitions
    metrics = MetricsBuilder(
        {t.id: per_target for t in spec.targets},
        list(scorers),
        spec.repetitions,
        spec.gate.confidence_level,
    )
    rows = TrialRows(manifest["planned"])
    folders = trial_folders(path, manifest)  # the run, or the shards a merged run holds
    recomputed: dict[str, bytes] = {}  # score id: digest of what must be reproduced
    finished: list[tuple[int, str, str, dict[str, str]]] = []  # for a sequential gate
    sequential = spec.gate.stopping is not None
    per_sample = len(spec.targets) * spec.repetitions
    sample_ids = [""] * spec.dataset.samples  # by position in the plan, as in the run
    # Graders answer from the run's own evidence: re-scoring never calls a model.
    made: list[Model] = []  # the models scorers make on the way, closed at the end
    try:
        with models_built() as made, model_roles_scope(_roles_of(spec)):
            for folder in folders:
                async for bundle, records in judge_folder(
                    folder, scorers, metrics, rows, task_metrics
                ):
                    trial = bundle["trial"]
                    sample_ids[trial["index"] // per_sample] = str(trial["sample_id"])
                    for record in records:
                        recomputed[record["score_id"]] = _compared(record) + _UNSEEN
                    if sequential:  # only a sequential gate replays its looks
                        statuses = {r["scorer_id"]: r["status"] for r in records}
                        state = bundle["state"]
                        finished.append((trial["index"], trial["target_id"], state, statuses))
    finally:
        await close_parts([*scorers.values(), *made])  # graders built, if never asked
    differing = _compare(folders, recomputed)
    built = metrics.build()
    recorded = _records(folders)
    regression = regression_of(spec, _spec_folder(manifest), baseline, recorded, path)
    gate = decide(spec.gate, built, list(scorers), regression)
    if sequential:  # the verdict of the last look, a look recorded
        gate = regate(path, spec, gate, built, replay_looks(spec, list(scorers), finished))
    summary = task_metrics.build(_fill_ids(path, sample_ids)) if task_metrics else {}
    scores = _records(folders)
    report = build_report(spec, manifest["status"], built, gate, rows, summary, scores)
    return Rescore(built, gate, report, len(recomputed), differing)


def _roles_of(spec: EvalSpec) -> ModelRoles | None:
    """The models a Python task's run bound to roles, for its graders to be replayed."""
    roles = spec.targets[0].model_roles if spec.targets else None
    return ModelRoles(roles, {}) if roles else None


def baseline_of_run(path: Path, given: Path | None) -> Path | None:
    """The baseline run ``assay score``/``gate`` would read for the run at *path*: *given*,
    else its spec's (``None`` without either, or when the spec's path cannot be used:
    the gate then says why). ``--trust`` checks that run's signature too."""
    spec = msgspec.json.decode((path / SPEC).read_bytes(), type=EvalSpec)
    try:
        return baseline_path(spec, _spec_folder(read_manifest(path)), given)
    except ConfigError:
        return None


def _spec_folder(manifest: dict[str, Any]) -> Path | None:
    """The folder the spec was run from: where its relative paths resolve."""
    source = manifest.get("spec_source")
    return Path(source).parent if source not in (None, "", "None") else None


def regate(
    path: Path, spec: EvalSpec, fixed: GateDecision, metrics: Metrics, monitor: Monitor
) -> GateDecision:
    """The sequential verdict of a finished run, re-decided: its last look, recorded as a
    look again in ``regates.jsonl`` (chained to the events head) so the number of times
    a run was looked at can be counted, and checked by ``verify``."""
    gate = sequential_gate(spec.gate, fixed, metrics, monitor)
    if not monitor.looks:
        return gate
    file = path / REGATES
    earlier = file.read_bytes().splitlines() if file.is_file() else []
    head = sha256_hex(earlier[-1]) if earlier else read_manifest(path)["events_head"]
    line = canonical_json(
        {"prev": head, "look": look_event(monitor.looks[-1]), "status": gate.status}
    )
    with open(file, "ab") as handle:
        handle.write(line + b"\n")
    return gate


async def judge_folder(
    folder: Path,
    scorers: dict[str, AnyScorer],
    metrics: MetricsBuilder,
    rows: TrialRows,
    task_metrics: TaskMetricsBuilder | None,
) -> AsyncIterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Judge every bundle of the run folder *folder* (its graders answered from its own
    events), counting each in *metrics* and *rows*; yield each bundle with its score
    records as it is judged (a run's bundles are never all held at once)."""
    store = ArtifactStore(folder / ARTIFACTS, write=False, keep_open=True)
    try:
        with open_evidence(folder / BUNDLES) as handle, replay_scope(replay_of_run(folder)):
            for line in handle:
                bundle = loads(line)
                sha = bundle["observation"].get("output")
                output = store.get(sha) if sha else None
                records = await judge(bundle, output, scorers, metrics, rows, task_metrics)
                yield bundle, records
    finally:
        store.close()


def _records(folders: list[Path]) -> Iterator[dict[str, Any]]:
    """The run's score records (of each folder in turn), read back one at a time."""
    for folder in folders:
        with open_evidence(folder / SCORES) as handle:
            for line in handle:
                yield loads(line)


def scorers_of(spec: EvalSpec) -> tuple[dict[str, AnyScorer], TaskMetricsBuilder | None]:
    """The scorers a frozen spec names: built from YAML kinds, or from its pinned task."""
    if spec.task is None:
        if any(s.kind == "python" for s in spec.scorers):
            raise ConfigError("task.in_memory", evaluation=spec.evaluation)
        return {s.id: build_scorer(s) for s in spec.scorers}, None
    record: dict[str, Any] = spec.task
    (task, loaded), *_ = load_tasks(f"{record['file']}@{record['name']}", record["args"])
    if loaded["digest"] != record["digest"]:
        raise ConfigError("task.changed", path=record["file"])
    score_on_error = bool((spec.errors or {}).get("score_on_error", False))
    # the policies the run's scorers ran under (an eval's ``approval=`` wins over the task's)
    policies = rebuild_policies(spec.targets[0].approval, task.approval) if spec.targets else None
    scorers, _, metrics = task_scorers(task, score_on_error, policies)
    builder = TaskMetricsBuilder(
        spec.repetitions,
        list(spec.epochs_reducer),
        metrics,
        spec.dataset.samples,
        _metadata_of(task, record),
        targets=len(spec.targets),
    )
    return scorers, builder


def _metadata_of(task: Task, record: dict[str, Any]) -> MetadataOf:
    """Sample metadata by plan position, for grouped and user metrics: the task's
    dataset selected and frozen as the run did, on first use only."""
    frozen: list[Dataset] = []

    def metadata_of(position: int) -> dict[str, Any]:
        if not frozen:
            chosen = select(task.dataset, **record.get("select", {}))
            frozen.append(freeze(chosen, getattr(task.dataset, "name", "memory")))
        return dict(frozen[0].sample(position).metadata)

    return metadata_of


def _fill_ids(path: Path, sample_ids: list[str]) -> list[str]:
    """Ids of planned samples no bundle named (an unfinished run), from the plan."""
    if "" not in sample_ids:
        return sample_ids
    with open_evidence(path / PLAN) as handle:
        for line in handle:
            trial = loads(line)
            sample_ids[trial["sample_index"]] = str(trial["sample_id"])
    return sample_ids


def _compared(record: dict[str, Any]) -> bytes:
    """What a re-score must reproduce of a record: status, bundle and grading usage
    (the replayed grader calls add up to the run's figures, exactly), as a 16-byte
    digest of its canonical JSON: 100,000 of them are held at once."""
    value = (record["status"], record["bundle_digest"], record.get("usage"))
    return hashlib.blake2b(canonical_json(value), digest_size=16).digest()


_UNSEEN, _SEEN = b"\0", b"\1"  # the byte after a digest in ``recomputed``


def _compare(folders: list[Path], recomputed: dict[str, bytes]) -> list[str]:
    """Score ids whose recorded status, bundle or grading usage differs from the
    recomputed one. A recomputed entry is marked seen in place (its last byte): no
    second set of every score id."""
    differing = []
    for record in _records(folders):
        key = record["score_id"]
        expected = recomputed.get(key)
        if expected is None or expected[:16] != _compared(record):
            differing.append(key)
        if expected is not None and expected[16:] == _UNSEEN:
            recomputed[key] = expected[:16] + _SEEN
    differing.extend(sorted(key for key, value in recomputed.items() if value[16:] == _UNSEEN))
    return differing


rescore_run = synchronous(rescore_run_async, "rescore_run")
