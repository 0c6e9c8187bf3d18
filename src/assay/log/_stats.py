"""``log.stats``, as Inspect code reads it: when the run started and finished, and the
tokens each evaluated model used (``stats.model_usage["openai/gpt-4o"]``)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import msgspec


class EvalStats(msgspec.Struct, frozen=True):
    """A run's times (ISO 8601 UTC; empty while unknown) and its models' usage
    (``input_tokens``, ``output_tokens``, ``total_tokens``, ``calls``, ``cost``) by
    model; graders' calls are not in it (the report has them per scorer)."""

    started_at: str
    completed_at: str
    model_usage: dict[str, Any]


def stats_of(run: Path, report: Any | None) -> EvalStats:
    """The stats of the run at *run*, from its manifest and (sealed) *report*."""
    from assay.evidence import read_manifest

    manifest = read_manifest(run)
    usage = dict(report.usage) if report is not None else {}
    return EvalStats(
        started_at=iso_time(manifest.get("started_at")),
        completed_at=iso_time(manifest.get("finished_at")),
        model_usage=usage,
    )


def iso_time(seconds: Any) -> str:
    """An epoch time as ISO 8601 UTC (Inspect's ``created``); empty when unknown."""
    if not isinstance(seconds, int | float):
        return ""
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC).isoformat()
