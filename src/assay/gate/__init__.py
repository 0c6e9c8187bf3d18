"""The release gate: policies applied to metrics, with evidence checked first."""

from assay.gate._baseline import (
    BASELINE_LABEL,
    changed_sample_ids,
    compare_with_baseline,
    no_baseline,
)
from assay.gate._decide import NOT_GATED, GateDecision, GateStatus, TargetDecision, decide
from assay.gate._power import independent_samples, samples_needed
from assay.gate._regression import (
    Baseline,
    Regression,
    RegressionCheck,
    check_regression,
    judge_regression,
)

__all__ = [
    "BASELINE_LABEL",
    "NOT_GATED",
    "Baseline",
    "GateDecision",
    "GateStatus",
    "Regression",
    "RegressionCheck",
    "TargetDecision",
    "changed_sample_ids",
    "check_regression",
    "compare_with_baseline",
    "decide",
    "independent_samples",
    "judge_regression",
    "no_baseline",
    "samples_needed",
]
