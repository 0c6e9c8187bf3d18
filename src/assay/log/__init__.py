"""Reading runs back as typed objects, with Inspect's names (``inspect_ai.log``).

``read_eval_log(run)`` gives a run's header, results and samples; ``header_only=True``
skips the samples; ``read_eval_log_samples(run)`` streams them one at a time;
``list_eval_logs(folder)`` lists the runs in a folder; ``write_eval_log(log, path)``
writes one as Inspect's ``.eval`` log. Everything is read through the
verified lookups of ``assay.evidence``: edited bytes are an error, never a result.

``assay.read_run`` (pandas DataFrames, one row per trial) is the other way to read a
run: a table for a notebook, where these are objects for code.
"""

from assay.log._read import (
    EvalLog,
    EvalLogInfo,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    LogStatus,
    SampleOutput,
    list_eval_logs,
    read_eval_log,
    read_eval_log_samples,
)
from assay.log._stats import EvalStats
from assay.log._write import write_eval_log

__all__ = [
    "EvalLog",
    "EvalLogInfo",
    "EvalMetric",
    "EvalResults",
    "EvalSample",
    "EvalScore",
    "EvalSpec",
    "EvalStats",
    "LogStatus",
    "SampleOutput",
    "list_eval_logs",
    "read_eval_log",
    "read_eval_log_samples",
    "write_eval_log",
]
