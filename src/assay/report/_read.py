"""A sealed run's ``report.json`` read back as a Report, checked against the manifest.

``eval_set`` returns the result of a unit it skips (complete already) from this report,
and ``assay.log`` gives it as a log's results: either way it must be the report the run
sealed, so its bytes are checked against the digest the manifest holds for them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from assay.errors import EvidenceError
from assay.report._model import Report

REPORT_JSON = "report.json"


def read_report(run: Path) -> Report:
    """*run*'s sealed report; an ``EvidenceError`` (exit 4) if it is missing, or its
    bytes are not the ones the manifest sealed."""
    from assay.evidence import read_manifest

    sealed = read_manifest(run).get("files", {}).get(REPORT_JSON)
    try:
        data = (run / REPORT_JSON).read_bytes()
    except OSError:
        raise EvidenceError(
            "run.not_a_run", path=str(run), reason=f"{REPORT_JSON} is missing"
        ) from None
    if sealed != "sha256:" + hashlib.sha256(data).hexdigest():
        first = f"{REPORT_JSON}: its digest is not the one the manifest sealed"
        raise EvidenceError("evidence.tampered", path=str(run), count=1, first=first)
    return msgspec.json.decode(data, type=Report)
