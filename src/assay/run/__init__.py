"""Running trials: the executor, attempts with retries, and trial lifecycle."""

from assay.run._executor import execute
from assay.run._groups import first_error
from assay.run._retry import backoff_delay
from assay.run._signals import run_until_signalled
from assay.run._trial import AttemptRecord, AttemptState, TrialResult, TrialState, run_trial

__all__ = [
    "AttemptRecord",
    "AttemptState",
    "TrialResult",
    "TrialState",
    "backoff_delay",
    "execute",
    "first_error",
    "run_trial",
    "run_until_signalled",
]
