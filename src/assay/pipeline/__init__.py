"""The pipeline end to end: ``run`` does it all, ``resume`` finishes an interrupted run,
``rescore`` redoes scoring from evidence."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
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

_EXPORTS = {
    "check_baseline_option": "assay.pipeline._baseline",
    "regression_of": "assay.pipeline._baseline",
    "RunOutcome": "assay.pipeline._conclude",
    "RunStopped": "assay.pipeline._conclude",
    "TaskSource": "assay.pipeline._eval",
    "enqueue_task": "assay.pipeline._eval",
    "eval": "assay.pipeline._eval",
    "eval_async": "assay.pipeline._eval",
    "EvalOptions": "assay.pipeline._eval_options",
    "EvalResult": "assay.pipeline._eval_result",
    "eval_retry": "assay.pipeline._eval_set",
    "eval_retry_async": "assay.pipeline._eval_set",
    "eval_set": "assay.pipeline._eval_set",
    "eval_set_async": "assay.pipeline._eval_set",
    "execute_run": "assay.pipeline._execute",
    "run_spec": "assay.pipeline._execute",
    "run_spec_async": "assay.pipeline._execute",
    "RunOptions": "assay.pipeline._options",
    "Prepared": "assay.pipeline._prepared",
    "prepare_spec": "assay.pipeline._prepared",
    "Progress": "assay.pipeline._progress",
    "ProgressCallback": "assay.pipeline._progress",
    "Rescore": "assay.pipeline._rescore",
    "baseline_of_run": "assay.pipeline._rescore",
    "rescore_run": "assay.pipeline._rescore",
    "rescore_run_async": "assay.pipeline._rescore",
    "load_for_resume": "assay.pipeline._resume",
    "prepare_for_resume": "assay.pipeline._resume",
    "resume_run": "assay.pipeline._resume",
    "resume_run_async": "assay.pipeline._resume",
}

__getattr__ = _lazy_exports(__name__, _EXPORTS, globals())

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
