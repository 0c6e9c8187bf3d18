"""Runs read back as typed objects, with Inspect's names: ``read_eval_log``,
``read_eval_log_samples``, ``list_eval_logs``.

A run directory is assay's log. Its header comes from ``manifest.json``, ``spec.json``
and the sealed ``report.json`` (checked against the digest the manifest holds); its
samples come from the evidence through ``assay.evidence.every_trial``, so each bundle,
output and sample is checked against its digest before it is given, and they are
streamed one at a time (a run of 100k trials is never held at once).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from assay.errors import AssayError, EvidenceError
from assay.log._location import log_path
from assay.log._reducers import reducers_of, split_by_key, split_by_reducer
from assay.log._stats import EvalStats, iso_time, stats_of
from assay.model._messages import ChatMessage
from assay.score import Score

if TYPE_CHECKING:
    from assay.report import Report

LogStatus = Literal["started", "success", "cancelled", "error"]


class EvalMetric(msgspec.Struct, frozen=True):
    """One metric of one scorer (``accuracy``, ``stderr``, ``mean``...)."""

    name: str
    value: float | None


class EvalScore(msgspec.Struct, frozen=True):
    """A scorer's metrics for one model: ``metrics`` by name, as Inspect's."""

    name: str
    scorer: str
    model: str
    metrics: dict[str, EvalMetric]
    reducer: str | None = None


class EvalResults(msgspec.Struct, frozen=True):
    """The run's results: samples planned and scored, each scorer's metrics, and the
    gate's verdict (assay's own: ``passed``, ``failed``, ``inconclusive``...)."""

    total_samples: int
    completed_samples: int
    scores: list[EvalScore]
    gate: str


class EvalSpec(msgspec.Struct, frozen=True):
    """What was run: the task, its model(s), when, and the spec's digest (which names
    the dataset, arguments, solver and scorers exactly)."""

    run_id: str
    task: str
    model: str
    models: list[str]
    created: str
    spec_digest: str
    dataset: dict[str, Any]
    task_args: dict[str, Any]


class SampleOutput(msgspec.Struct, frozen=True):
    """``sample.output`` as Inspect code reads it: the model and its ``completion``."""

    model: str
    completion: str


class EvalSample(msgspec.Struct, frozen=True):
    """One trial: the sample it was given, the answer, and each scorer's ``Score``.

    ``completion`` is the answer as recorded (a program's JSON answer stays a dict);
    ``output.completion`` is it as text, where Inspect code looks for it.
    """

    id: str | int
    epoch: int
    model: str
    input: Any
    target: Any
    completion: Any
    scores: dict[str, Score]
    metadata: dict[str, Any]
    state: str
    error: str | None
    trial_id: str
    bundle_digest: str
    messages: list[ChatMessage] = []
    store: dict[str, Any] = {}

    @property
    def output(self) -> SampleOutput:
        """The answer where Inspect has it: ``sample.output.completion``."""
        return SampleOutput(model=self.model, completion=as_text(self.completion))


class EvalLog(msgspec.Struct):
    """A run read back: ``status``, ``eval`` (the spec), ``results`` (``None`` while it
    has no report) and ``samples`` (``None`` when read with ``header_only``)."""

    location: Path
    status: LogStatus
    eval: EvalSpec
    results: EvalResults | None = None
    samples: list[EvalSample] | None = None
    stats: EvalStats | None = None


class EvalLogInfo(msgspec.Struct, frozen=True):
    """A run found by ``list_eval_logs``: where it is and what it is of."""

    name: str
    task: str
    model: str
    status: LogStatus
    mtime: float


def read_eval_log(log_file: str | Path | Any, header_only: bool = False) -> EvalLog:
    """The run at *log_file*: header, results and (unless *header_only*) every sample.

    A folder that is not a run, or evidence whose bytes were changed, is an
    ``EvidenceError`` (exit 4 on the CLI), never a quiet read of edited bytes.
    """
    path = log_path(log_file)
    log = EvalLog(location=path, status=run_status(path), eval=_spec_of(path))
    log.results, log.stats = _results_of(path)
    if not header_only:
        log.samples = list(read_eval_log_samples(path))
    return log


def read_eval_log_samples(log_file: str | Path | Any) -> Iterator[EvalSample]:
    """The samples of the run at *log_file*, one at a time, in plan order, each checked
    against its digests as it is read."""
    from assay.evidence import every_trial, read_manifest
    from assay.report._details import answer_of

    path = log_path(log_file)
    read_manifest(path)  # not a run at all: an EvidenceError, before anything is read
    for trial in every_trial(path):
        bundle, seen = trial.bundle, trial.bundle["observation"]
        head = bundle["trial"]
        sample = trial.sample or {}
        media = seen.get("media", "")  # a blocked trial has no output, so no media type
        yield EvalSample(
            id=head["sample_id"],
            epoch=int(head["repetition"]),
            model=str(head["target_id"]),
            input=sample.get("input"),
            target=seen.get("expected"),
            completion=answer_of(trial.output, media),
            scores={str(s["scorer_id"]): _score_of(s) for s in trial.scores},
            metadata=sample.get("metadata") or {},
            state=str(bundle["state"]),
            error=seen.get("failure"),
            trial_id=str(head["trial_id"]),
            bundle_digest=str(bundle["digest"]),
            **_conversation_of(trial.output, media),
        )


def _conversation_of(output: bytes | None, media: str) -> dict[str, Any]:
    """A Python task's final ``messages`` and ``store`` (Inspect's ``sample.messages`` and
    ``sample.store``); nothing for another target's answer."""
    from assay.evidence import decode_output

    try:
        state = decode_output(output, media) if output is not None else None
    except ValueError:
        return {}
    if not isinstance(state, dict) or not isinstance(state.get("messages"), list):
        return {}
    return {
        "messages": msgspec.convert(state["messages"], list[ChatMessage]),
        "store": state.get("store") or {},
    }


def list_eval_logs(log_dir: str | Path = "runs", recursive: bool = True) -> list[EvalLogInfo]:
    """The runs under *log_dir*, newest first (as Inspect lists them); folders that are
    not runs are skipped."""
    found: list[EvalLogInfo] = []
    root = Path(log_dir)
    manifests = root.rglob("manifest.json") if recursive else root.glob("*/manifest.json")
    for manifest in manifests:
        try:
            spec = _spec_of(manifest.parent)
            status = run_status(manifest.parent)
        except AssayError:
            continue
        found.append(
            EvalLogInfo(
                name=str(manifest.parent),
                task=spec.task,
                model=spec.model,
                status=status,
                mtime=manifest.stat().st_mtime,
            )
        )
    return sorted(found, key=lambda info: info.mtime, reverse=True)


def run_status(run: Path) -> LogStatus:
    """Inspect's status of a run: ``started`` while it runs; ``error`` when a trial or a
    score ended in an error; ``cancelled`` when it was interrupted; else ``success``."""
    from assay.evidence import read_manifest

    status = read_manifest(run).get("status")
    if status == "running":
        return "started"
    if has_errors(run):
        return "error"
    return "success" if status == "complete" else "cancelled"


def has_errors(run: Path) -> bool:
    """Whether any trial of *run* ended in an error, or any score did. Only the lines
    that hold the word are parsed: a status check on a big run stays cheap."""
    from assay.evidence import BUNDLES, SCORES

    return any(
        (record.get("observation") or {}).get("outcome") == "error"
        for record in _records_with(run / BUNDLES, b'"outcome":"error"')
    ) or any(
        record.get("status") == "error"
        for record in _records_with(run / SCORES, b'"status":"error"')
    )


def _records_with(path: Path, needle: bytes) -> Iterator[dict[str, Any]]:
    """The whole JSON lines of *path* that hold *needle*, parsed (none if it is missing;
    a torn last line is not a record)."""
    from assay._digest import loads
    from assay.evidence._framed import open_evidence

    try:
        with open_evidence(path) as handle:
            for line in handle:
                if needle in line and line.endswith(b"\n"):
                    try:
                        record = loads(line)
                    except msgspec.DecodeError:  # not a record: verify says what it is
                        continue
                    if isinstance(record, dict):
                        yield record
    except FileNotFoundError:
        return


def _spec_of(run: Path) -> EvalSpec:
    """The header's spec, from the manifest and ``spec.json``."""
    from assay.evidence import read_manifest

    manifest = read_manifest(run)
    try:
        spec = msgspec.json.decode((run / "spec.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        raise EvidenceError(
            "run.not_a_run", path=str(run), reason="spec.json is missing or unreadable"
        ) from None
    models = [str(t.get("model") or t.get("id")) for t in spec.get("targets", [])]
    task = spec.get("task") or {}
    return EvalSpec(
        run_id=run.name,
        task=str(spec.get("evaluation", "")),
        model=models[0] if len(models) == 1 else ", ".join(models),
        models=models,
        created=iso_time(manifest.get("started_at")),
        spec_digest=str(manifest.get("spec_digest", "")),
        dataset=spec.get("dataset") or {},
        task_args=(task.get("args") or {}) if isinstance(task, dict) else {},
    )


def _results_of(run: Path) -> tuple[EvalResults | None, EvalStats]:
    """The results in the run's sealed report (``None`` before it has one) and its stats."""
    from assay.report import read_report

    if not (run / "report.json").exists():
        return None, stats_of(run, None)
    report = read_report(run)
    return results_of_report(report, reducers_of(run)), stats_of(run, report)


def results_of_report(report: Report, reducers: list[str] | None = None) -> EvalResults:
    """A report's numbers as Inspect's ``EvalResults``: each scorer's metrics per model,
    one ``EvalScore`` per epoch reducer of *reducers* (a YAML spec's run, which declares
    no metrics, gives each scorer's pass rate as ``accuracy`` with its ``stderr``)."""
    scores = [
        EvalScore(
            name=key or scorer,
            scorer=scorer,
            model=model,
            metrics={name: EvalMetric(name, _number(value)) for name, value in named.items()},
            reducer=reducer,
        )
        for model, by_scorer in report.task_metrics.items()
        for scorer, metrics in by_scorer.items()
        if isinstance(metrics, dict)
        for reducer, part in split_by_reducer(_flat(metrics), reducers or ["mean"])
        for key, named in split_by_key(part)
    ]
    if not scores:
        scores = [
            EvalScore(
                name=estimate.scorer_id,
                scorer=estimate.scorer_id,
                model=estimate.target_id,
                metrics={
                    "accuracy": EvalMetric("accuracy", estimate.value),
                    "stderr": EvalMetric("stderr", estimate.stderr),
                },
            )
            for estimate in report.metrics.estimates
        ]
    finished = sum(t.states.get("completed", 0) for t in report.metrics.targets)
    return EvalResults(
        total_samples=report.planned,
        completed_samples=finished,
        scores=scores,
        gate=report.gate.status,
    )


def _flat(metrics: dict[str, Any]) -> dict[str, Any]:
    """A metric whose value is a dict (``grouped``: one per group, and ``all``) as one
    metric per key, as Inspect lists them."""
    flat: dict[str, Any] = {}
    for name, value in metrics.items():
        flat.update(value if isinstance(value, dict) else {name: value})
    return flat


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) else None


def _score_of(record: dict[str, Any]) -> Score:
    """A score record as the ``Score`` a scorer returned: its ``metadata`` as the scorer
    gave it, or, when it gave none, the score's status (``{"status": "passed"}``)."""
    value = record.get("value")
    return Score(
        value=value if value is not None else str(record.get("status")),
        answer=record.get("answer"),
        explanation=record.get("reason") or None,
        metadata=record.get("metadata") or {"status": record.get("status")},
    )


def as_text(value: Any) -> str:
    """A recorded value as text: text as itself, nothing as empty, other values as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
