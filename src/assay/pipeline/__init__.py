"""The pipeline end to end: ``run`` does it all; ``rescore`` redoes scoring from evidence."""

from assay.pipeline._options import RunOptions
from assay.pipeline._rescore import Rescore, rescore_run
from assay.pipeline._run import RunOutcome, run_spec, run_spec_async

__all__ = ["Rescore", "RunOptions", "RunOutcome", "rescore_run", "run_spec", "run_spec_async"]
