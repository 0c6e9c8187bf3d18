"""The pipeline end to end: ``run`` does it all, ``resume`` finishes an interrupted run,
``rescore`` redoes scoring from evidence."""

from assay.pipeline._options import RunOptions
from assay.pipeline._rescore import Rescore, rescore_run
from assay.pipeline._resume import load_for_resume, resume_run, resume_run_async
from assay.pipeline._run import RunOutcome, execute_run, run_spec, run_spec_async

__all__ = [
    "Rescore",
    "RunOptions",
    "RunOutcome",
    "execute_run",
    "load_for_resume",
    "rescore_run",
    "resume_run",
    "resume_run_async",
    "run_spec",
    "run_spec_async",
]
