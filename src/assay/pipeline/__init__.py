"""The pipeline end to end: ``run`` does it all, ``resume`` finishes an interrupted run,
``rescore`` redoes scoring from evidence."""

from assay.pipeline._baseline import check_baseline_option, regression_of
from assay.pipeline._conclude import RunOutcome, RunStopped
from assay.pipeline._eval import TaskSource, enqueue_task, eval, eval_async
from assay.pipeline._eval_options import EvalOptions
from assay.pipeline._eval_result import EvalResult
from assay.pipeline._eval_set import eval_retry, eval_retry_async, eval_set, eval_set_async
from assay.pipeline._execute import execute_run, run_spec, run_spec_async
from assay.pipeline._options import RunOptions
from assay.pipeline._prepared import Prepared, prepare_spec
from assay.pipeline._progress import Progress, ProgressCallback
from assay.pipeline._rescore import Rescore, baseline_of_run, rescore_run, rescore_run_async
from assay.pipeline._resume import (
    load_for_resume,
    prepare_for_resume,
    resume_run,
    resume_run_async,
)

__all__ = [
    "EvalOptions",
    "EvalResult",
    "Prepared",
    "Progress",
    "ProgressCallback",
    "Rescore",
    "RunOptions",
    "RunOutcome",
    "RunStopped",
    "TaskSource",
    "baseline_of_run",
    "check_baseline_option",
    "enqueue_task",
    "eval",
    "eval_async",
    "eval_retry",
    "eval_retry_async",
    "eval_set",
    "eval_set_async",
    "execute_run",
    "load_for_resume",
    "prepare_for_resume",
    "prepare_spec",
    "regression_of",
    "rescore_run",
    "rescore_run_async",
    "resume_run",
    "resume_run_async",
    "run_spec",
    "run_spec_async",
]
