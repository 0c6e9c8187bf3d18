"""Scoring: scorers over observations, score records, and metrics over the plan.

The scorers that run code (``python_tests``) or ask a model (``model_graded_*``) are
imported when first used: a run that needs neither never loads the sandbox machinery or
the model layer they pull in.
"""

import typing as _typing

from assay._import_path import lazy_exports as _lazy_exports
from assay.score._adapter import ObservationScorer, from_python_scorer
from assay.score._bootstrap import MeanEstimate, bootstrap_mean, bootstrap_means, seed_of
from assay.score._choice import choice
from assay.score._estimates import MetricEstimate, Metrics, TargetCounts
from assay.score._f1 import f1
from assay.score._grouped import GroupedMetric, grouped
from assay.score._match import exact, includes, match
from assay.score._metric import Metric, SampleScore, accuracy, mean, metric, metric_label
from assay.score._metrics import MetricsBuilder
from assay.score._pattern import pattern
from assay.score._records import AnyScorer, score_id, score_observation, score_record
from assay.score._reducers import (
    Reducer,
    ScoreReducer,
    at_least,
    at_least_k,
    get_reducer,
    get_score_reducer,
    max_score,
    mean_score,
    median_score,
    mode_score,
    pass_at,
    pass_at_k,
    score_reducer,
)
from assay.score._score import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    PythonScorer,
    Score,
    Value,
    ValueToFloat,
    scorer,
    scorer_metrics,
    value_to_float,
)
from assay.score._scorers import (
    Observation,
    Scorer,
    ScoreStatus,
    Verdict,
    build_scorer,
    check_exact,
    check_field_match,
    check_includes,
    check_regex,
    product_gate,
    same_value,
)
from assay.score._stats import bootstrap_stderr, std, stderr, var

if _typing.TYPE_CHECKING:
    from assay.score._code import extract_code, python_tests
    from assay.score._model_graded import model_graded_fact, model_graded_qa
    from assay.score._multi import answer, multi_scorer
    from assay.score._sandbox import SandboxLimits, SandboxResult, run_python

_LAZY = {
    "answer": "assay.score._multi",
    "multi_scorer": "assay.score._multi",
    "extract_code": "assay.score._code",
    "python_tests": "assay.score._code",
    "model_graded_fact": "assay.score._model_graded",
    "model_graded_qa": "assay.score._model_graded",
    "SandboxLimits": "assay.score._sandbox",
    "SandboxResult": "assay.score._sandbox",
    "run_python": "assay.score._sandbox",
}


__getattr__ = _lazy_exports(__name__, _LAZY, globals())


__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "PARTIAL",
    "AnyScorer",
    "GroupedMetric",
    "MeanEstimate",
    "Metric",
    "MetricEstimate",
    "Metrics",
    "MetricsBuilder",
    "Observation",
    "ObservationScorer",
    "PythonScorer",
    "Reducer",
    "SampleScore",
    "SandboxLimits",
    "SandboxResult",
    "Score",
    "ScoreReducer",
    "ScoreStatus",
    "Scorer",
    "TargetCounts",
    "Value",
    "ValueToFloat",
    "Verdict",
    "accuracy",
    "answer",
    "at_least",
    "at_least_k",
    "bootstrap_mean",
    "bootstrap_means",
    "bootstrap_stderr",
    "build_scorer",
    "check_exact",
    "check_field_match",
    "check_includes",
    "check_regex",
    "choice",
    "exact",
    "extract_code",
    "f1",
    "from_python_scorer",
    "get_reducer",
    "get_score_reducer",
    "grouped",
    "includes",
    "match",
    "max_score",
    "mean",
    "mean_score",
    "median_score",
    "metric",
    "metric_label",
    "mode_score",
    "model_graded_fact",
    "model_graded_qa",
    "multi_scorer",
    "pass_at",
    "pass_at_k",
    "pattern",
    "product_gate",
    "python_tests",
    "run_python",
    "same_value",
    "score_id",
    "score_observation",
    "score_record",
    "score_reducer",
    "scorer",
    "scorer_metrics",
    "seed_of",
    "std",
    "stderr",
    "value_to_float",
    "var",
]
