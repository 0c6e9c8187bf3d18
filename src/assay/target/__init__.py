"""Targets: the systems under test (programs, Python functions; models later)."""

from assay.target._base import InfrastructureError, Target, TargetOutcome, target_payload
from assay.target._build import build_target
from assay.target._callable import CallableTarget, load_callable, outcome_from_value
from assay.target._http import HttpTarget
from assay.target._solver import STATE_MEDIA, SolverTarget
from assay.target._subprocess import SubprocessTarget

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
