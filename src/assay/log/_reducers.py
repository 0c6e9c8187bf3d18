"""A scorer's metrics split by epoch reducer, as Inspect's ``EvalScore`` lists them.

assay's report names a metric reduced by another reducer than ``mean`` ``max/accuracy``
in one flat dict; Inspect gives one ``EvalScore`` per reducer, its metrics under their
own names (``metrics["accuracy"]``) and the reducer in ``EvalScore.reducer``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def reducers_of(run: Path | None) -> list[str]:
    """The run's epoch reducers, from its ``spec.json`` (``["mean"]`` when it names none)."""
    if run is None:
        return ["mean"]
    try:
        found = json.loads((run / "spec.json").read_bytes()).get("epochs_reducer")
    except (OSError, ValueError, AttributeError):
        return ["mean"]
    return [str(r) for r in found] if isinstance(found, list) and found else ["mean"]


def split_by_reducer(
    metrics: dict[str, Any], reducers: list[str]
) -> list[tuple[str | None, dict[str, Any]]]:
    """*metrics* as ``(reducer, metrics named without it)`` per reducer, in *reducers*'
    order; ``mean``'s are the names no other reducer claims. With only ``mean``, one
    part whose reducer is ``None`` (the run named none), as it was."""
    if reducers == ["mean"]:
        return [(None, metrics)]
    prefixes = [f"{r}/" for r in reducers if r != "mean"]
    parts: list[tuple[str | None, dict[str, Any]]] = []
    for reducer in reducers:
        if reducer == "mean":
            own = {k: v for k, v in metrics.items() if not k.startswith(tuple(prefixes))}
        else:
            cut = len(reducer) + 1
            own = {k[cut:]: v for k, v in metrics.items() if k.startswith(f"{reducer}/")}
        parts.append((reducer, own))
    return parts


def split_by_key(metrics: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """A dict-valued score's metrics (``correct/mean``) as ``(key, {"mean": ...})`` per
    key, as Inspect gives each key its own ``EvalScore``; plain names under ``None``."""
    parts: dict[str | None, dict[str, Any]] = {}
    for name, value in metrics.items():
        key, _, metric = name.rpartition("/")
        parts.setdefault(key or None, {})[metric] = value
    return list(parts.items())
