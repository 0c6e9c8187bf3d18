"""A run written as Inspect AI's ``.eval`` log, for teams whose tools read Inspect logs
(``inspect view``, ``inspect_ai.log.read_eval_log``, their own analysis code).

The ``.eval`` file is a zip of JSON members: ``header.json`` (the log without its
samples), ``samples/<id>_epoch_<n>.json`` (one per trial), ``summaries.json`` (one short
record per sample), ``reductions.json`` (each scorer's per-sample value over epochs) and
``_journal/start.json`` (what a reader falls back on without a header). Everything is
taken from ``assay.log``, so from verified evidence. What Inspect has no place for (the
bundle digest a score judged, the trial id, the gate) goes in each sample's and the
log's ``metadata``, so an Inspect reader keeps the way back to the evidence.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import IO, Any

from assay import __version__
from assay.errors import ConfigError, RunError
from assay.log._read import (
    EvalLog,
    EvalSample,
    as_text,
    read_eval_log,
    read_eval_log_samples,
)

LOG_VERSION = 2
"""The version of Inspect's log format written (``EvalLog.version``)."""


def write_inspect_file(run: Path, output: Path, target: str | None = None) -> int:
    """Write *run* as an Inspect ``.eval`` log at *output*, whole or not at all (a
    partial file beside it, renamed when done); return how many samples."""
    partial = output.with_name(f".{output.name}.partial")
    try:
        with open(partial, "wb") as handle:
            count = write_inspect_log(run, handle, target)
        partial.replace(output)
    except OSError as exc:
        raise RunError.storage(output, exc) from exc
    finally:
        partial.unlink(missing_ok=True)
    return count


def write_inspect_log(run: Path, out: IO[bytes], target: str | None = None) -> int:
    """Write *run*'s trials of one *target* as an Inspect ``.eval`` zip to *out*; return
    how many samples. An Inspect log is of one model: a run of several targets needs
    *target* (a ``ConfigError`` naming them otherwise)."""
    log = read_eval_log(run, header_only=True)
    target = _one_target(run, log, target)
    header = _header(log, target)
    summaries: list[dict[str, Any]] = []
    by_scorer: dict[str, dict[str | int, list[float]]] = {}
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        start = {"version": LOG_VERSION, "eval": header["eval"], "plan": header["plan"]}
        _write(archive, "_journal/start.json", start)
        for sample in read_eval_log_samples(run):
            if sample.model != target:
                continue
            record = _sample(sample)
            _write(archive, f"samples/{sample.id}_epoch_{sample.epoch}.json", record)
            summaries.append(_summary(record))
            _collect(by_scorer, sample)
        _write(archive, "summaries.json", summaries)
        _write(archive, "reductions.json", _reductions(by_scorer))
        if len(log.eval.models) > 1 and "results" in header:  # this target's trials only
            header["results"]["total_samples"] = len(summaries)
            header["results"]["completed_samples"] = len(summaries)
        _write(archive, "header.json", header)
    return len(summaries)


def _one_target(run: Path, log: EvalLog, target: str | None) -> str:
    """The target whose trials are exported: *target*, or the run's only one."""
    targets = log.eval.models
    if target is None and len(targets) == 1:
        return targets[0]
    if target is None:
        raise ConfigError(
            "export.one_target", path=str(run), count=len(targets), targets=", ".join(targets)
        )
    if target not in targets:
        raise ConfigError(
            "export.no_target", path=str(run), target=target, targets=", ".join(targets)
        )
    return target


def _write(archive: zipfile.ZipFile, name: str, value: Any) -> None:
    archive.writestr(name, json.dumps(value, ensure_ascii=False, default=str))


def _header(log: EvalLog, target: str) -> dict[str, Any]:
    """``header.json``: Inspect's ``EvalLog`` without samples, for *target*."""
    spec = log.eval
    results = log.results
    created = spec.created or "1970-01-01T00:00:00+00:00"
    header: dict[str, Any] = {
        "version": LOG_VERSION,
        "status": log.status,
        "eval": {
            "eval_id": spec.run_id,
            "run_id": spec.run_id,
            "created": created,
            "task": spec.task,
            "task_id": spec.spec_digest.removeprefix("sha256:")[:22],
            "task_version": 0,
            "task_args": spec.task_args,
            "dataset": {
                "name": str(spec.dataset.get("path", "")) or None,
                "samples": spec.dataset.get("samples"),
            },
            "model": target,
            "config": {},
            "packages": {"assay": __version__},
            "metadata": {"assay_spec_digest": spec.spec_digest},
        },
        "plan": {"name": "plan", "steps": [], "config": {}},
        "stats": {"started_at": created, "completed_at": created, "model_usage": {}},
        "metadata": {"assay_run": str(log.location)},
    }
    if results is not None:
        header["results"] = {
            "total_samples": results.total_samples,
            "completed_samples": results.completed_samples,
            "scores": [
                {
                    "name": score.name,
                    "scorer": score.scorer,
                    "params": {},
                    "metrics": {
                        name: {"name": name, "value": metric.value}
                        for name, metric in score.metrics.items()
                        if metric.value is not None
                    },
                    "metadata": {"model": score.model},
                }
                for score in results.scores
                if score.model == target
            ],
        }
        header["metadata"]["assay_gate"] = results.gate
    return header


def _sample(sample: EvalSample) -> dict[str, Any]:
    """``samples/<id>_epoch_<n>.json``: one trial as Inspect's ``EvalSample``."""
    completion = sample.output.completion
    prompt = as_text(sample.input)
    record: dict[str, Any] = {
        "id": sample.id,
        "epoch": sample.epoch,
        "input": prompt,
        "target": _target(sample.target),
        "messages": [
            {"role": "user", "content": prompt, "source": "input"},
            {"role": "assistant", "content": completion, "source": "generate"},
        ],
        "output": {
            "model": sample.model,
            "choices": [
                {
                    "message": {"role": "assistant", "content": completion, "source": "generate"},
                    "stop_reason": "stop",
                }
            ],
            "completion": completion,
        },
        "scores": {
            name: {
                "value": score.value,
                "answer": score.answer,
                "explanation": score.explanation,
                "metadata": score.metadata,
            }
            for name, score in sample.scores.items()
        },
        "metadata": {
            **sample.metadata,
            "assay_trial_id": sample.trial_id,
            "assay_bundle_digest": sample.bundle_digest,
        },
        "store": {},
        "events": [],
        "model_usage": {},
    }
    if sample.error:
        record["error"] = {"message": sample.error, "traceback": "", "traceback_ansi": ""}
    return record


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    """A sample's line in ``summaries.json`` (what ``inspect view`` lists)."""
    summary = {key: record[key] for key in ("id", "epoch", "input", "target", "scores")}
    summary["metadata"] = {}
    summary["completed"] = True
    if "error" in record:
        summary["error"] = record["error"]["message"]
    return summary


def _collect(by_scorer: dict[str, dict[str | int, list[float]]], sample: EvalSample) -> None:
    for name, score in sample.scores.items():
        value = score.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            by_scorer.setdefault(name, {}).setdefault(sample.id, []).append(float(value))


def _reductions(by_scorer: dict[str, dict[str | int, list[float]]]) -> list[dict[str, Any]]:
    """``reductions.json``: each scorer's mean per sample over its epochs (numeric scores;
    assay's own epoch reducers are in the run's report)."""
    return [
        {
            "scorer": scorer,
            "reducer": "mean",
            "samples": [
                {"sample_id": sample_id, "value": sum(values) / len(values)}
                for sample_id, values in by_sample.items()
            ],
        }
        for scorer, by_sample in by_scorer.items()
    ]


def _target(value: Any) -> str | list[str]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return as_text(value)
