"""The release gate: policies applied to metrics, with evidence checked first."""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
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

_EXPORTS = {
    "BASELINE_LABEL": "assay.gate._baseline",
    "changed_sample_ids": "assay.gate._baseline",
    "compare_with_baseline": "assay.gate._baseline",
    "no_baseline": "assay.gate._baseline",
    "NOT_GATED": "assay.gate._decide",
    "GateDecision": "assay.gate._decide",
    "GateStatus": "assay.gate._decide",
    "TargetDecision": "assay.gate._decide",
    "decide": "assay.gate._decide",
    "independent_samples": "assay.gate._power",
    "samples_needed": "assay.gate._power",
    "Baseline": "assay.gate._regression",
    "Regression": "assay.gate._regression",
    "RegressionCheck": "assay.gate._regression",
    "check_regression": "assay.gate._regression",
    "judge_regression": "assay.gate._regression",
}

__getattr__ = _lazy_exports(__name__, _EXPORTS, globals())

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
