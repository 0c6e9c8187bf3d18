"""Paired comparisons: exact McNemar over the samples two targets (or runs) share."""

from assay.compare._mcnemar import (
    MAX_FLIPPED,
    FlippedSample,
    PairedComparison,
    compare_outcomes,
    mcnemar_p,
    paired_interval,
)
from assay.compare._pairs import compare_runs, compare_targets, statuses_of

__all__ = [
    "MAX_FLIPPED",
    "FlippedSample",
    "PairedComparison",
    "compare_outcomes",
    "compare_runs",
    "compare_targets",
    "mcnemar_p",
    "paired_interval",
    "statuses_of",
]
