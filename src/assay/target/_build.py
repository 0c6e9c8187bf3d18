"""Make the target a spec describes."""

from __future__ import annotations

from pathlib import Path

from assay.spec import TargetSpec
from assay.target._base import Target
from assay.target._callable import CallableTarget
from assay.target._http import HttpTarget
from assay.target._persistent import PersistentTarget
from assay.target._subprocess import SubprocessTarget


def build_target(spec: TargetSpec, root: Path) -> Target:
    """Make the target a spec describes; *root* is the spec's folder."""
    if spec.kind == "callable":
        return CallableTarget(spec, root)
    if spec.kind == "http":
        return HttpTarget(spec)
    if spec.protocol == "jsonl":
        return PersistentTarget(spec, root)
    return SubprocessTarget(spec, root)
