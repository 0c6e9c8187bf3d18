"""``resume``: finish an interrupted run in place, with exactly the spec it started with.

The spec is loaded again from where the run recorded it (or from a path the caller
gives) and must freeze to the same digest; otherwise the run is refused with the part
that changed, since finishing it with other data or targets would mix two evaluations.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec

from assay.errors import ConfigError, EvidenceError, RunError
from assay.evidence import read_manifest
from assay.model import price_scope, prices_from_env
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared, prepare_spec
from assay.pipeline._run import RunOutcome, execute_run
from assay.pipeline._task_prepare import rebuild_task
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
    now = msgspec.to_builtins(spec)
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
    if frozen.task is None:
        if any(t.kind == "solver" for t in frozen.targets):
            raise ConfigError("task.in_memory", evaluation=frozen.evaluation)
        return prepare_spec(load_for_resume(path, spec_path))
    manifest = read_manifest(path)
    if manifest.get("status") == "complete":
        raise RunError("run.complete", path=str(path))
    prepared = rebuild_task(frozen)
    if prepared.spec.digest != manifest["spec_digest"]:
        reason = _what_changed(path, prepared.spec)
        raise RunError("run.spec_changed", path=str(path), reason=reason)
    return prepared


async def resume_run_async(
    path: Path, options: RunOptions, spec_path: Path | None = None
) -> RunOutcome:
    """Finish the run at *path*: repair torn tails, keep finished trials, run the rest."""
    with price_scope(prices_from_env()):  # a cost_limit's frozen price must match again
        prepared = prepare_for_resume(path, spec_path)
        options = msgspec.structs.replace(options, output=path)
        return await execute_run(prepared, options, resume=True)


def resume_run(path: Path, options: RunOptions, spec_path: Path | None = None) -> RunOutcome:
    """Synchronous wrapper around ``resume_run_async``."""
    return anyio.run(resume_run_async, path, options, spec_path)
