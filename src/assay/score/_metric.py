"""Metrics over reduced sample scores: ``@metric`` factories returning ``list -> float``.

Scores are reduced over epochs per sample first (see ``_reducers``); a metric then sees
one ``SampleScore`` per planned sample, so a sample that produced no score still counts
(with value 0) and the denominator is the plan's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import msgspec

from assay._registry import registered, registry_info

if TYPE_CHECKING:
    from assay.score._score import Score


class SampleScore(msgspec.Struct, frozen=True):
    """One sample's score after epoch reduction, with its metadata for grouping.

    A metric written for Inspect reads ``item.score.value`` (or ``.as_float()``) and
    ``item.sample_metadata``: both are here, over the same reduced value.
    """

    value: float
    sample_id: str
    metadata: dict[str, Any] = {}
    scored: bool = True

    @property
    def score(self) -> Score:
        """The reduced score as a ``Score`` (Inspect's ``SampleScore.score``)."""
        from assay.score._score import Score

        return Score(value=self.value)

    @property
    def sample_metadata(self) -> dict[str, Any]:
        """The sample's metadata (Inspect's name for ``metadata``)."""
        return self.metadata


Metric = Callable[[Sequence[SampleScore]], float]
"""A metric: every planned sample's reduced score (a sequence, in plan order) -> a value."""

# A metric may carry a label to be reported under instead of its registered name.
LABEL_ATTR = "__assay_label__"


def metric_label(product: object, fallback: str) -> str:
    """The name a metric's value is reported under: its label, registered name or fallback."""
    label = getattr(product, LABEL_ATTR, None)
    if isinstance(label, str):
        return label
    info = registry_info(product)
    return info.name if info is not None else getattr(product, "__name__", fallback)


# A metric factory: usually returns a Metric; ``grouped`` returns one giving a dict.
M = TypeVar("M", bound=Callable[..., Any])


@overload
def metric(factory: M, *, name: str | None = None) -> M: ...
@overload
def metric(factory: None = None, *, name: str | None = None) -> Callable[[M], M]: ...
def metric(factory: M | None = None, *, name: str | None = None) -> Any:
    """Register a metric factory: ``@metric`` or ``@metric(name="...")``."""
    if factory is None:
        return registered("metric", name)
    return registered("metric", name)(factory)


def values_of(scores: Sequence[SampleScore]) -> Sequence[float]:
    """The values of *scores* in order. A run's own sequence of every planned sample
    hands them over at once (``float_values``) instead of making a ``SampleScore`` for
    each, which cost sealing a 100,000-sample run about 0.3 s per metric."""
    fast = getattr(scores, "float_values", None)
    return fast() if fast is not None else [s.value for s in scores]


@metric
def accuracy() -> Metric:
    """Mean of the values (letters mapped to 1, 0.5, 0) over every planned sample."""

    def compute(scores: Sequence[SampleScore]) -> float:
        return sum(values_of(scores)) / len(scores) if scores else 0.0

    return compute


@metric
def mean() -> Metric:
    """Mean of the values over every planned sample."""
    compute: Metric = accuracy()
    return compute
