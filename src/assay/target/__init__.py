"""Targets: the systems under test (programs, Python functions; models later)."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports
from assay.target._base import InfrastructureError, Target, TargetOutcome, target_payload
from assay.target._build import build_target

if _typing.TYPE_CHECKING:
    from assay.target._callable import CallableTarget, load_callable, outcome_from_value
    from assay.target._http import HttpTarget
    from assay.target._solver import STATE_MEDIA, SolverTarget
    from assay.target._subprocess import SubprocessTarget


# each kind of target imported when first used: a YAML spec's run never loads the
# solver, model and sandbox machinery a Python task's needs, and a Python task's run
# never loads the programs' (subprocesses, reaping)
_KINDS = {
    "STATE_MEDIA": "assay.target._solver",
    "SolverTarget": "assay.target._solver",
    "CallableTarget": "assay.target._callable",
    "load_callable": "assay.target._callable",
    "outcome_from_value": "assay.target._callable",
    "HttpTarget": "assay.target._http",
    "SubprocessTarget": "assay.target._subprocess",
}
__getattr__ = _lazy_exports(__name__, _KINDS, globals())


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
