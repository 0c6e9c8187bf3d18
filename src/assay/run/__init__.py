"""Running trials: the executor, attempts with retries, trial lifecycle, and target
calls sent to a Dask cluster."""

from assay.run._cluster import PYTHON_TASK_ON_CLUSTER, ClusterTarget, cluster_targets
from assay.run._executor import execute
from assay.run._groups import first_error
from assay.run._retry import backoff_delay
from assay.run._signals import run_until_signalled
from assay.run._trial import AttemptRecord, AttemptState, TrialResult, TrialState, run_trial

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
