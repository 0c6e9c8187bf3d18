"""Which shard runs make one whole run: the checks ``assay merge`` makes before it joins
them, and ``verify`` makes again on the copies a merged run holds.

A shard run (``assay run SPEC --shard K/N``) records ``shard: {index, count, trials}`` in
its manifest, bound to its event chain like every field. A set of shards makes a whole
run when each is sealed complete, all ran the same frozen spec (one spec digest), all
split the plan into the same N parts, and every part 1..N is there exactly once: the
parts are disjoint by construction (whole samples, round robin), and ``verify`` checks
each shard holds exactly its part, so together they cover the plan exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

Problem = tuple[str, dict[str, Any]]  # catalog key, parameters

SHARDS = "shards"
"""The folder of a merged run that holds a copy of each shard, as ``shards/K``."""


def trial_folders(path: Path, manifest: dict[str, Any]) -> list[Path]:
    """Where the trials of the run at *path* are: the run itself, or, for a merged run,
    each shard it holds (in part order)."""
    pins = manifest.get("shards")
    if not isinstance(pins, list):
        return [path]
    return [path / str(pin["path"]) for pin in pins]


def trial_files(path: Path, name: str) -> list[Path]:
    """The record file *name* (``scores.jsonl``, ``bundles.jsonl``) of the run at *path*:
    its own, or, for a merged run, each shard's."""
    from assay._digest import loads

    try:
        manifest = loads((path / "manifest.json").read_bytes())
    except (OSError, ValueError):
        manifest = None
    manifest = manifest if isinstance(manifest, dict) else {}
    return [folder / name for folder in trial_folders(path, manifest)]


def shard_label(manifest: dict[str, Any]) -> str | None:
    """``K/N`` of a shard run's manifest; ``None`` for a run that is not a shard."""
    shard = manifest.get("shard")
    if not isinstance(shard, dict):
        return None
    index, count = shard.get("index"), shard.get("count")
    if not (isinstance(index, int) and isinstance(count, int) and 1 <= index <= count):
        return None
    return f"{index}/{count}"


def shard_set_problems(shards: Sequence[tuple[str, dict[str, Any]]]) -> list[Problem]:
    """What keeps the runs *shards* (name, manifest) from making one whole run; empty
    when they do. The first named run sets the spec and the number of parts."""
    problems: list[Problem] = []
    seen: dict[str, list[str]] = {}
    first_name, first = shards[0]
    count = first.get("shard", {}).get("count") if shard_label(first) else None
    for name, manifest in shards:
        label = shard_label(manifest)
        if label is None:
            problems.append(("merge.not_shard", {"path": name}))
            continue
        if manifest.get("status") != "complete":
            problems.append(("merge.unfinished", {"path": name, "status": manifest.get("status")}))
        if manifest.get("spec_digest") != first.get("spec_digest"):
            problems.append(("merge.spec_differs", {"path": name, "first": first_name}))
        if manifest["shard"]["count"] != count:
            problems.append(
                ("merge.count_differs", {"path": name, "shard": label, "first": first_name})
            )
            continue
        seen.setdefault(label, []).append(name)
    for label, names in seen.items():
        if len(names) > 1:
            problems.append(("merge.twice", {"shard": label, "paths": ", ".join(names)}))
    if isinstance(count, int):
        missing = [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in seen]
        if missing:
            problems.append(("merge.missing", {"shards": ", ".join(missing)}))
    return problems
