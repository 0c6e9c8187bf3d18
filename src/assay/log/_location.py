"""Where a log is, from any of the things Inspect code hands ``read_eval_log`` and
``eval_retry``: a path, an ``EvalLogInfo`` from ``list_eval_logs``, or a log or
``eval`` result (their ``location``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def log_path(log: Any) -> Path:
    """The run folder *log* names.

    Raises:
        TypeError: *log* is none of those things.
    """
    if isinstance(log, str | Path):
        return Path(log)
    location = getattr(log, "location", None)
    if location is None and type(log).__name__ == "EvalLogInfo":
        location = log.name
    if location is None:
        raise TypeError(f"not a log or a log's location: {log!r}")
    return Path(location)
