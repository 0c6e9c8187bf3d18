"""What report.html shows when a trial is opened: its input, expected answer, the answer
the target gave and why it failed, read back from the run folder as the report is made.

A reviewer judges a score by reading what the model said; report.json lists ids and
verdicts only (it is a machine contract), so the HTML page reads these texts from the
evidence the run has just flushed, for the trials it lists. Each text is cut at
``DETAIL_CHARS`` characters (``assay show RUN ID --full`` prints it whole).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assay._digest import loads

if TYPE_CHECKING:
    from assay.evidence._store import ArtifactStore

DETAIL_CHARS = 4_000
"""A text longer than this is cut in report.html, saying how much was left out."""


class TrialDetail(msgspec.Struct, frozen=True):
    """The texts of one trial as report.html shows them (already cut)."""

    input: str
    expected: str
    answer: str
    failure: str = ""


class _TrialIds(msgspec.Struct):
    trial_id: str


class _Shown(msgspec.Struct):
    """The parts of a bundle line a detail needs; the rest is skipped, not built."""

    trial: _TrialIds
    observation: dict[str, Any]
    artifacts: dict[str, str] = {}


_shown = msgspec.json.Decoder(_Shown)


def read_details(
    run: Path | None, trial_ids: set[str], store: ArtifactStore | None = None
) -> dict[str, TrialDetail]:
    """The details of the trials *trial_ids* of the run at *run*: one pass over its
    bundles, then their sample and output artifacts at once (``{}`` for a dry run).
    *store*: the run's own (the one still writing it), else one is opened to read."""
    if run is None or not trial_ids:
        return {}
    from assay.evidence._framed import open_evidence
    from assay.evidence._layout import ARTIFACTS, BUNDLES
    from assay.evidence._store import ArtifactStore

    reader = store or ArtifactStore(run / ARTIFACTS, write=False)
    try:
        with open_evidence(run / BUNDLES) as handle:
            shown = shown_bundles(handle, trial_ids)
        return details_of(shown, reader)
    except (OSError, ValueError, KeyError):
        return {}  # the page still has the scores; the texts are a convenience
    finally:
        if store is None:
            reader.close()


def shown_bundles(lines: Iterable[bytes], trial_ids: set[str]) -> list[_Shown]:
    """The parts a detail needs of the whole bundle *lines* of the trials *trial_ids*,
    in file order (a torn last line is left out)."""
    ids = {trial_id.encode() for trial_id in trial_ids}
    return [
        bundle
        for line in lines
        if line.endswith(b"\n")
        and _may_be(line, ids)
        and (bundle := _shown.decode(line)).trial.trial_id in trial_ids
    ]


def details_of(shown: list[_Shown], reader: ArtifactStore) -> dict[str, TrialDetail]:
    """The details of the *shown* bundles, their sample and output artifacts read at
    once from *reader*; a trial's last bundle wins. An artifact that cannot be read
    ends it: the details made until then."""
    details: dict[str, TrialDetail] = {}
    try:
        wanted = {b.artifacts["sample"] for b in shown if b.artifacts.get("sample")}
        wanted.update(b.observation["output"] for b in shown if b.observation.get("output"))
        contents = reader.get_many(wanted)
        for bundle in shown:
            details[bundle.trial.trial_id] = _detail(bundle, contents)
    except (OSError, ValueError, KeyError):
        pass  # the page still has the scores; the texts are a convenience
    return details


_ID = b'"trial_id":"t-'
_ID_SIZE = 26  # "t-" and 24 hex digits


def _may_be(line: bytes, wanted: set[bytes]) -> bool:
    """Whether the bundle *line* may be one of the *wanted* trials' (their ids in
    bytes): when the line names one ``t-`` trial id, only if it is one of them, read
    off the bytes; a line naming none or several (an id in its data) is decoded.
    Decoding every line cost a report at 100,000 trials about 0.4 s."""
    at = line.find(_ID) + len(_ID) - 2
    if (
        at < len(_ID) - 2
        or line.find(_ID, at) >= 0
        or line[at + _ID_SIZE : at + _ID_SIZE + 1] != b'"'
    ):
        return True
    return line[at : at + _ID_SIZE] in wanted


def _detail(bundle: _Shown, contents: dict[str, bytes]) -> TrialDetail:
    seen = bundle.observation
    sample_sha = bundle.artifacts.get("sample")
    sample = loads(contents[sample_sha]) if sample_sha else {}
    output = contents[seen["output"]] if seen.get("output") else None
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
