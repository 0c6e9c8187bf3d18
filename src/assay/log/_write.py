"""``write_eval_log(log, location)``: what ``read_eval_log`` or ``eval`` returned,
written as Inspect's ``.eval`` log (as ``assay export RUN --format inspect`` writes it).

The log is written from the run's evidence at ``log.location``, checked as it is read,
not from the object in memory: an Inspect log written by assay says only what the
evidence says, so a change made to the object is not written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from assay.errors import ConfigError
from assay.log._inspect import write_inspect_file
from assay.log._location import log_path


def write_eval_log(
    log: Any,
    location: str | Path | None = None,
    format: Literal["eval", "json", "auto"] = "auto",
) -> None:
    """Write *log* as Inspect's ``.eval`` log at *location*.

    Args:
        log: what ``read_eval_log`` or ``eval`` returned, an ``EvalLogInfo`` or a run
            folder.
        location: the file to write (default: ``<run folder>.eval`` beside the run).
        format: ``"eval"`` or ``"auto"``; Inspect's ``"json"`` logs are not written (a
            ``ConfigError``), nor is a ``.json`` location with ``"auto"``.
    """
    run = log_path(log)
    output = Path(location) if location is not None else run.with_name(run.name + ".eval")
    asked = "json" if format == "auto" and output.suffix == ".json" else format
    if asked not in ("eval", "auto"):
        raise ConfigError("export.log_format", path=str(output), format=asked)
    write_inspect_file(run, output)
