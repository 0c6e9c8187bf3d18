"""The frozen evaluation spec: loading, path safety and digests."""

from assay.spec._load import LoadedSpec, load_spec
from assay.spec._model import (
    PYTHON,
    SPEC_SCHEMA,
    DatasetRef,
    EvalSpec,
    GatePolicy,
    NoRegression,
    RetryPolicy,
    ScorerSpec,
    TargetSpec,
)
from assay.spec._paths import resolve_folder_inside, resolve_inside

__all__ = [
    "PYTHON",
    "SPEC_SCHEMA",
    "DatasetRef",
    "EvalSpec",
    "GatePolicy",
    "LoadedSpec",
    "NoRegression",
    "RetryPolicy",
    "ScorerSpec",
    "TargetSpec",
    "load_spec",
    "resolve_folder_inside",
    "resolve_inside",
]
