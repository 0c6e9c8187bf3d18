"""Running trials: the executor, attempts with retries, trial lifecycle, and target
calls sent to a Dask cluster."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports
from assay.run._executor import execute
from assay.run._groups import first_error
from assay.run._retry import backoff_delay
from assay.run._signals import run_until_signalled
from assay.run._trial import AttemptRecord, AttemptState, TrialResult, TrialState, run_trial

if _typing.TYPE_CHECKING:
    from assay.run._cluster import (
        PYTHON_TASK_ON_CLUSTER,
        ClusterTarget,
        cluster_client,
        cluster_targets,
    )
    from assay.run._cluster_chunks import call_chunks, worker_count
    from assay.run._cluster_worker import Call, Reply, call_target

_CLUSTER = {"PYTHON_TASK_ON_CLUSTER", "ClusterTarget", "cluster_client", "cluster_targets"}
_CHUNKS = {"call_chunks", "worker_count"}
_WORKER = {"Call", "Reply", "call_target"}


# the cluster's names, imported when first used: a run without ``--cluster`` never
# loads Dask's side (nor the targets a worker rebuilds)
__getattr__ = _lazy_exports(
    __name__,
    {
        **dict.fromkeys(_CLUSTER, "assay.run._cluster"),
        **dict.fromkeys(_CHUNKS, "assay.run._cluster_chunks"),
        **dict.fromkeys(_WORKER, "assay.run._cluster_worker"),
    },
    globals(),
)


__all__ = [
    "PYTHON_TASK_ON_CLUSTER",
    "AttemptRecord",
    "AttemptState",
    "Call",
    "ClusterTarget",
    "Reply",
    "TrialResult",
    "TrialState",
    "backoff_delay",
    "call_chunks",
    "call_target",
    "cluster_client",
    "cluster_targets",
    "execute",
    "first_error",
    "run_trial",
    "run_until_signalled",
    "worker_count",
]
