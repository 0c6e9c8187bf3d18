"""Running trials: the executor, attempts with retries, trial lifecycle, and target
calls sent to a Dask cluster."""

import typing as _typing

from assay.run._executor import execute
from assay.run._groups import first_error
from assay.run._retry import backoff_delay
from assay.run._signals import run_until_signalled
from assay.run._trial import AttemptRecord, AttemptState, TrialResult, TrialState, run_trial

if _typing.TYPE_CHECKING:
    from assay.run._cluster import PYTHON_TASK_ON_CLUSTER, ClusterTarget, cluster_targets

_CLUSTER = {"PYTHON_TASK_ON_CLUSTER", "ClusterTarget", "cluster_targets"}


def __getattr__(name: str) -> _typing.Any:
    """The cluster's names, imported when first used: a run without ``--cluster`` never
    loads Dask's side (nor the targets a worker rebuilds)."""
    if name not in _CLUSTER:
        raise AttributeError(f"module 'assay.run' has no attribute {name!r}")
    from assay.run import _cluster

    value = getattr(_cluster, name)
    globals()[name] = value
    return value


__all__ = [
    "PYTHON_TASK_ON_CLUSTER",
    "AttemptRecord",
    "AttemptState",
    "ClusterTarget",
    "TrialResult",
    "TrialState",
    "backoff_delay",
    "cluster_targets",
    "execute",
    "first_error",
    "run_trial",
    "run_until_signalled",
]
