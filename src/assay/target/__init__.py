"""Targets: the systems under test (programs, Python functions; models later)."""

import typing as _typing

from assay.target._base import InfrastructureError, Target, TargetOutcome, target_payload
from assay.target._build import build_target
from assay.target._callable import CallableTarget, load_callable, outcome_from_value
from assay.target._http import HttpTarget
from assay.target._subprocess import SubprocessTarget

if _typing.TYPE_CHECKING:
    from assay.target._solver import STATE_MEDIA, SolverTarget


def __getattr__(name: str) -> _typing.Any:
    """A Python task's target, imported when first used: a YAML spec's run never loads
    the solver, model and sandbox machinery it needs."""
    if name not in ("STATE_MEDIA", "SolverTarget"):
        raise AttributeError(f"module 'assay.target' has no attribute {name!r}")
    from assay.target import _solver

    value = getattr(_solver, name)
    globals()[name] = value
    return value


__all__ = [
    "STATE_MEDIA",
    "CallableTarget",
    "HttpTarget",
    "InfrastructureError",
    "SolverTarget",
    "SubprocessTarget",
    "Target",
    "TargetOutcome",
    "build_target",
    "load_callable",
    "outcome_from_value",
    "target_payload",
]
