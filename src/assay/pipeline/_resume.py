"""``resume``: finish an interrupted run in place, with exactly the spec it started with.

The spec is loaded again from where the run recorded it (or from a path the caller
gives) and must freeze to the same digest; otherwise the run is refused with the part
that changed, since finishing it with other data or targets would mix two evaluations.

A run that answered model calls from the response cache says so in its manifest
(``cache``, with the expiry of new entries), and its resume uses the cache again unless
told otherwise: an interrupted run and its resume then ask a model exactly the calls an
uninterrupted cached run would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from assay.errors import ConfigError, EvidenceError, RunError
from assay.evidence import read_manifest
from assay.model import (
    DEFAULT_EXPIRY,
    ResponseCache,
    cache_scope,
    load_prices,
    price_scope,
    prices_from_env,
)
from assay.pipeline._conclude import RunOutcome
from assay.pipeline._execute import execute_run
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared, prepare_spec
from assay.pipeline._sync import synchronous
from assay.pipeline._task_prepare import rebuild_frozen
from assay.plan import Shard
from assay.spec import EvalSpec, LoadedSpec, load_spec


def load_for_resume(path: Path, spec_path: Path | None = None) -> LoadedSpec:
    """Load the spec of the unfinished run at *path* and check it is unchanged."""
    manifest = read_manifest(path)
    if manifest.get("status") == "complete":
        raise RunError("run.complete", path=str(path))
    loaded = load_spec(spec_path or Path(manifest["spec_source"]))
    if loaded.spec.digest != manifest["spec_digest"]:
        reason = _what_changed(path, loaded.spec)
        raise RunError("run.spec_changed", path=str(path), reason=reason)
    return loaded


def _what_changed(path: Path, spec: EvalSpec) -> str:
    try:
        frozen = msgspec.json.decode((path / "spec.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return "its spec digest differs"
    return spec_changes(frozen, spec)


def spec_changes(frozen: dict[str, Any], spec: EvalSpec) -> str:
    """Which fields of *spec* differ from *frozen* (a spec as JSON holds it)."""
    now = msgspec.json.decode(msgspec.json.encode(spec))  # as spec.json holds it: lists, not tuples
    changed = sorted(k for k in set(frozen) | set(now) if frozen.get(k) != now.get(k))
    return "changed: " + ", ".join(changed) if changed else "its spec digest differs"


def prepare_for_resume(path: Path, spec_path: Path | None = None) -> Prepared:
    """What it takes to finish the run at *path*: from its YAML spec or its task file."""
    read_manifest(path)  # not a run at all: one line, exit 4
    try:
        frozen = msgspec.json.decode((path / "spec.json").read_bytes(), type=EvalSpec)
    except (OSError, msgspec.DecodeError):
        raise EvidenceError(
            "run.not_a_run", path=str(path), reason="spec.json is missing or unreadable"
        ) from None
    if not any(t.kind == "solver" for t in frozen.targets):
        return prepare_spec(load_for_resume(path, spec_path))
    manifest = read_manifest(path)
    if frozen.task is not None and manifest.get("status") == "complete":  # else: in memory,
        raise RunError("run.complete", path=str(path))  # which rebuild_frozen refuses first
    prepared = rebuild_frozen(frozen)
    if prepared.spec.digest != manifest["spec_digest"]:
        reason = _what_changed(path, prepared.spec)
        raise RunError("run.spec_changed", path=str(path), reason=reason)
    return prepared


async def resume_run_async(
    path: Path,
    options: RunOptions,
    spec_path: Path | None = None,
    *,
    cache: bool | None = None,
    cache_expiry: str | float | None = None,
    prices: Path | None = None,
) -> RunOutcome:
    """Finish the run at *path*: repair torn tails, keep finished trials, run the rest.

    *cache* answers model calls from the response cache (``None``: as the run did, by
    its manifest); *cache_expiry* is how long new entries stay fresh (``None``: the
    run's, else the default); *prices* is a price file (``None``: ``$ASSAY_PRICES``).
    """
    table = load_prices(prices) if prices is not None else prices_from_env()
    with price_scope(table):  # a cost_limit's frozen price must match again
        prepared = prepare_for_resume(path, spec_path)
        responses = resume_cache(path, prepared, cache, cache_expiry)
        shard = shard_of_manifest(read_manifest(path))  # a shard is finished as a shard
        options = msgspec.structs.replace(options, output=path, shard=shard)
        with cache_scope(responses):
            return await execute_run(prepared, options, resume=True)


def shard_of_manifest(manifest: dict[str, Any]) -> Shard | None:
    """The part of the plan a run holds, as its manifest records it (``None``: all)."""
    shard = manifest.get("shard")
    return Shard(shard["index"], shard["count"]) if isinstance(shard, dict) else None


def resume_cache(
    path: Path, prepared: Prepared, cache: bool | None, expiry: str | float | None
) -> ResponseCache | None:
    """The response cache a resume uses: asked for, or the one the run recorded."""
    recorded = read_manifest(path).get("cache")
    use = cache if cache is not None else isinstance(recorded, dict)
    if not use:
        return None
    if prepared.spec.task is None:  # a YAML spec's targets are programs, not models
        reason = "the response cache is for Python tasks (file.py or file.py@task)"
        raise ConfigError("task.option", option="--cache", reason=reason)
    if expiry is None:
        expiry = recorded.get("expiry") if isinstance(recorded, dict) else DEFAULT_EXPIRY
    return ResponseCache(expiry=expiry).open()


resume_run = synchronous(resume_run_async, "resume_run")
