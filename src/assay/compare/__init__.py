"""Paired comparisons over the samples two targets (or runs) share.

Pass/fail by exact McNemar on the discordant pairs; continuous scores (or repeated
samples) by the paired bootstrap of per-sample differences with a sign test.
"""

from assay.compare._mcnemar import (
    MAX_FLIPPED,
    FlippedSample,
    PairedComparison,
    compare_outcomes,
    mcnemar_p,
    paired_interval,
    summarize,
)
from assay.compare._means import MEAN, PAIRED_BOOTSTRAP, SIGN_TEST, MeanTally
from assay.compare._pairs import compare_targets, statuses_of
from assay.compare._runs import compare_runs

__all__ = [
    "MAX_FLIPPED",
    "MEAN",
    "PAIRED_BOOTSTRAP",
    "SIGN_TEST",
    "FlippedSample",
    "MeanTally",
    "PairedComparison",
    "compare_outcomes",
    "compare_runs",
    "compare_targets",
    "mcnemar_p",
    "paired_interval",
    "statuses_of",
    "summarize",
]
