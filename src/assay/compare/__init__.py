"""Paired comparisons over the samples two targets (or runs) share.

Pass/fail by exact McNemar on the discordant pairs with Tango's score interval;
continuous scores (or repeated samples) by per-sample mean differences with a sign test
and the same score interval over fractional discordant masses. With repetitions the
pass rates are tested clustered by sample. ``p_adjusted`` is Holm's over one output.
"""

from assay.compare._holm import holm, holm_adjusted
from assay.compare._mcnemar import (
    MAX_FLIPPED,
    FlippedSample,
    PairedComparison,
    compare_outcomes,
    mcnemar_p,
    summarize,
)
from assay.compare._means import MEAN, PAIRED_BOOTSTRAP, SIGN_TEST, TANGO_MEANS, MeanTally
from assay.compare._pairs import CLUSTERED_MCNEMAR, compare_targets, statuses_of
from assay.compare._runs import compare_runs
from assay.compare._score import TANGO, margin_p_values, paired_interval, pairs_needed

__all__ = [
    "CLUSTERED_MCNEMAR",
    "MAX_FLIPPED",
    "MEAN",
    "PAIRED_BOOTSTRAP",
    "SIGN_TEST",
    "TANGO",
    "TANGO_MEANS",
    "FlippedSample",
    "MeanTally",
    "PairedComparison",
    "compare_outcomes",
    "compare_runs",
    "compare_targets",
    "holm",
    "holm_adjusted",
    "margin_p_values",
    "mcnemar_p",
    "paired_interval",
    "pairs_needed",
    "statuses_of",
    "summarize",
]
