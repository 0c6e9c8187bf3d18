"""The frozen evaluation spec: loading, path safety and digests.

The spec's types load with the package; the loader (YAML, datasets) only when first
asked for, so reading a frozen ``spec.json`` (``assay verify``) never imports it.
"""

import typing as _typing

from assay.spec._model import (
    PYTHON,
    SPEC_SCHEMA,
    DatasetRef,
    EvalSpec,
    GatePolicy,
    NoRegression,
    RetryPolicy,
    ScorerSpec,
    Sequential,
    TargetSpec,
)
from assay.spec._paths import resolve_folder_inside, resolve_inside

if _typing.TYPE_CHECKING:
    from assay.spec._load import LoadedSpec, load_spec


def __getattr__(name: str) -> _typing.Any:
    """``load_spec`` and ``LoadedSpec``, imported the first time one is asked for."""
    if name in ("LoadedSpec", "load_spec"):
        from assay.spec import _load

        value = globals()[name] = getattr(_load, name)
        return value
    raise AttributeError(f"module 'assay.spec' has no attribute {name!r}")


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
    "Sequential",
    "TargetSpec",
    "load_spec",
    "resolve_folder_inside",
    "resolve_inside",
]
