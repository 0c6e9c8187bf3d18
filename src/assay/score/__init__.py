"""Scoring: scorers over observations, score records, and metrics over the plan."""

from assay.score._metrics import MetricEstimate, Metrics, MetricsBuilder, TargetCounts
from assay.score._records import score_observation, score_record
from assay.score._scorers import (
    Observation,
    Scorer,
    ScoreStatus,
    Verdict,
    build_scorer,
    exact,
    field_match,
    includes,
    regex,
    same_value,
)

__all__ = [
    "MetricEstimate",
    "Metrics",
    "MetricsBuilder",
    "Observation",
    "ScoreStatus",
    "Scorer",
    "TargetCounts",
    "Verdict",
    "build_scorer",
    "exact",
    "field_match",
    "includes",
    "regex",
    "same_value",
    "score_observation",
    "score_record",
]
