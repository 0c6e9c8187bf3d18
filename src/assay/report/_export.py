"""One row per trial, read from a run's evidence: ``assay export`` and ``assay.read_run``.

A run's trials are what people put in a spreadsheet or a notebook: who answered which
sample, what was asked, what was expected, what came back, and each scorer's verdict
with its reason. The rows come from the evidence itself (each bundle, output and sample
checked against its digest as ``assay show`` checks them), never from report.json, which
lists only part of a big run.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgspec

from assay._digest import loads
from assay.errors import ConfigError
from assay.report._details import answer_of

TRIAL_COLUMNS = [
    "trial_id",
    "bundle_digest",
    "index",
    "target_id",
    "sample_id",
    "repetition",
    "state",
    "input",
    "expected",
    "answer",
    "failure",
]
"""The columns every export starts with; each scorer then adds ``<scorer>.status``,
``<scorer>.value`` and ``<scorer>.reason``."""

SCORE_FIELDS = ("status", "value", "reason")
FORMATS = ("csv", "jsonl")


class RunFrames(msgspec.Struct, frozen=True):
    """``assay.read_run``'s answer: ``trials`` (one row per trial, the export's columns)
    and ``scores`` (one row per trial and scorer: status, value, reason)."""

    trials: Any
    scores: Any


def scorer_ids(run: Path) -> list[str]:
    """The scorers of *run*'s score records, in the order they first appear."""
    from assay.evidence._framed import open_evidence
    from assay.evidence._layout import SCORES
    from assay.evidence._shards import trial_files

    seen: dict[str, None] = {}
    for file in trial_files(run, SCORES):  # a merged run's: each shard's
        try:
            with open_evidence(file) as handle:
                for line in handle:
                    if line.endswith(b"\n"):
                        seen.setdefault(str(loads(line).get("scorer_id")), None)
        except FileNotFoundError:
            pass
    return list(seen)


def trial_rows(run: Path) -> Iterator[dict[str, Any]]:
    """Each finished trial of *run* as one flat record, in plan order (values as
    recorded: an input or answer that is JSON stays a list or dict)."""
    from assay.evidence import every_trial, read_manifest

    read_manifest(run)  # not a run at all: one line, exit 4
    scorers = scorer_ids(run)
    for trial in every_trial(run):
        bundle, seen = trial.bundle, trial.bundle["observation"]
        head = bundle["trial"]
        row: dict[str, Any] = {
            "trial_id": head["trial_id"],
            "bundle_digest": bundle["digest"],
            "index": head["index"],
            "target_id": head["target_id"],
            "sample_id": head["sample_id"],
            "repetition": head["repetition"],
            "state": bundle["state"],
            "input": (trial.sample or {}).get("input"),
            "expected": seen["expected"],
            "answer": answer_of(trial.output, seen.get("media", "")),  # none when blocked
            "failure": seen.get("failure"),
        }
        by_scorer = {score["scorer_id"]: score for score in trial.scores}
        for scorer_id in scorers:
            score = by_scorer.get(scorer_id, {})
            for field in SCORE_FIELDS:
                row[f"{scorer_id}.{field}"] = score.get(field)
        yield row


def write_export(run: Path, fmt: str, out: IO[str]) -> int:
    """Write *run*'s trials to *out* as CSV or JSON lines; return how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
    rows = trial_rows(run)
    count = 0
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
        return count
    columns = TRIAL_COLUMNS + [f"{s}.{f}" for s in scorer_ids(run) for f in SCORE_FIELDS]
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: cell_text(value) for key, value in row.items()})
        count += 1
    return count


def cell_text(value: Any) -> str:
    """A CSV cell: text as itself, nothing as empty, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def read_run(run: str | Path) -> RunFrames:
    """*run*'s trials and scores as pandas DataFrames (pandas is optional: without it,
    a ConfigError saying how to install it)."""
    try:
        import pandas  # deferred: optional, and heavy
    except ImportError:
        raise ConfigError("export.no_pandas") from None
    path = Path(run)
    trials = list(trial_rows(path))
    scorers = scorer_ids(path)
    columns = TRIAL_COLUMNS + [f"{s}.{f}" for s in scorers for f in SCORE_FIELDS]
    scores = [
        {
            "trial_id": row["trial_id"],
            "target_id": row["target_id"],
            "sample_id": row["sample_id"],
            "repetition": row["repetition"],
            "scorer_id": scorer_id,
            **{field: row[f"{scorer_id}.{field}"] for field in SCORE_FIELDS},
        }
        for row in trials
        for scorer_id in scorers
    ]
    score_columns = ["trial_id", "target_id", "sample_id", "repetition", "scorer_id"]
    return RunFrames(
        trials=pandas.DataFrame(trials, columns=columns),
        scores=pandas.DataFrame(scores, columns=score_columns + list(SCORE_FIELDS)),
    )
