"""What report.html shows when a trial is opened: its input, expected answer, the answer
the target gave and why it failed, read back from the run folder as the report is made.

A reviewer judges a score by reading what the model said; report.json lists ids and
verdicts only (it is a machine contract), so the HTML page reads these texts from the
evidence the run has just flushed, for the trials it lists. Each text is cut at
``DETAIL_CHARS`` characters (``assay show RUN ID --full`` prints it whole).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from assay._digest import loads

DETAIL_CHARS = 4_000
"""A text longer than this is cut in report.html, saying how much was left out."""


class TrialDetail(msgspec.Struct, frozen=True):
    """The texts of one trial as report.html shows them (already cut)."""

    input: str
    expected: str
    answer: str
    failure: str = ""


def read_details(run: Path | None, trial_ids: set[str]) -> dict[str, TrialDetail]:
    """The details of the trials *trial_ids* of the run at *run*: one pass over its
    bundles, then each trial's sample and output artifacts, fetched together (``{}``
    for a dry run). Memory follows the trials listed, not the run's size."""
    if run is None or not trial_ids:
        return {}
    from assay.evidence._layout import ARTIFACTS, BUNDLES
    from assay.evidence._store import ArtifactStore

    bundles: dict[str, dict[str, Any]] = {}
    try:
        with open(run / BUNDLES, "rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    continue
                bundle = loads(line)
                if bundle["trial"]["trial_id"] in trial_ids:
                    bundles[bundle["trial"]["trial_id"]] = bundle
        wanted = {sha for bundle in bundles.values() for sha in _artifacts_shown(bundle)}
        stored = ArtifactStore(run / ARTIFACTS, write=False).get_some(wanted)
        return {trial_id: _detail(bundle, stored) for trial_id, bundle in bundles.items()}
    except (OSError, ValueError, KeyError):
        return {}  # the page still has the scores; the texts are a convenience


def _artifacts_shown(bundle: dict[str, Any]) -> list[str]:
    """The digests of a trial's sample and output, those it has."""
    shas = [bundle.get("artifacts", {}).get("sample"), bundle["observation"].get("output")]
    return [sha for sha in shas if sha]


def _detail(bundle: dict[str, Any], stored: dict[str, bytes]) -> TrialDetail:
    seen = bundle["observation"]
    sample_sha = bundle.get("artifacts", {}).get("sample")
    sample = loads(stored[sample_sha]) if sample_sha in stored else {}
    output = stored.get(seen["output"]) if seen.get("output") else None
    return TrialDetail(
        input=detail_text(sample.get("input")),
        expected=detail_text(seen.get("expected")),
        answer=detail_text(answer_of(output, seen.get("media", ""))),
        failure=detail_text(seen.get("failure")) if seen.get("failure") else "",
    )


def answer_of(output: bytes | None, media: str) -> Any:
    """What the target answered: a Python task's final message, else the output as
    recorded (text that is not the JSON its media type says is kept as text)."""
    if output is None:
        return None
    from assay.evidence import decode_output

    try:
        value = decode_output(output, media)
    except ValueError:
        return output.decode("utf-8", errors="replace")
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        message = (value.get("output") or {}).get("message") or {}
        return message.get("content", "")
    return value


def detail_text(value: Any) -> str:
    """*value* as the page shows it: text as itself, JSON indented, cut at DETAIL_CHARS."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    if len(text) > DETAIL_CHARS:
        more = len(text) - DETAIL_CHARS
        text = f"{text[:DETAIL_CHARS]}\n… ({more:,} more characters: assay show RUN ID --full)"
    return text
