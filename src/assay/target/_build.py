"""Make the target a spec describes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from assay.spec import TargetSpec
    from assay.target._base import Target


def build_target(spec: TargetSpec, root: Path, attempts: int = 3) -> Target:
    """Make the target a spec describes; *root* is the spec's folder, *attempts* the
    ``retry.max_attempts`` its trials get (a long-lived program's crash-loop limit allows
    for them). Each kind's module is imported here, for its kind only: a Python task's
    run (its target is the solver) never loads the programs' machinery (subprocesses, a
    sandbox, reaping)."""
    if spec.kind == "callable":
        from assay.target._callable import CallableTarget

        return CallableTarget(spec, root)
    if spec.kind == "http":
        from assay.target._http import HttpTarget

        return HttpTarget(spec)
    if spec.protocol == "jsonl":
        from assay.target._persistent import PersistentTarget

        return PersistentTarget(spec, root, attempts)
    from assay.target._subprocess import SubprocessTarget

    return SubprocessTarget(spec, root)
