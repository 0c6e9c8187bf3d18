"""``grouped``: any metric computed per group of samples (by a metadata key) and overall.

A single accuracy hides where a model fails; grouping by ``subject`` or ``difficulty``
shows it. The overall value is reported under ``"all"`` next to the groups, and the
result is labelled ``<metric>_by_<key>`` (``accuracy_by_topic``), so two grouped metrics
of one scorer keep apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assay._registry import registry_info
from assay.score._metric import LABEL_ATTR, Metric, SampleScore, metric

GroupedMetric = Callable[[Sequence[SampleScore]], dict[str, float]]

ALL = "all"


@metric
def grouped(metric: Metric, group_key: str) -> GroupedMetric:
    """*metric* per value of ``SampleScore.metadata[group_key]``, plus ``"all"``.

    Every sample must carry the key: a sample silently left out of every group would
    make the groups disagree with ``"all"``. Group names are the values as text,
    sorted, with ``"all"`` last.
    """

    def compute(scores: Sequence[SampleScore]) -> dict[str, float]:
        groups: dict[str, list[SampleScore]] = {}
        missing = []
        for score in scores:
            if group_key not in score.metadata:
                missing.append(score.sample_id)
                continue
            groups.setdefault(str(score.metadata[group_key]), []).append(score)
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise ValueError(
                f"grouped(group_key={group_key!r}): {len(missing)} sample(s) have no "
                f"{group_key!r} in their metadata ({shown}); add it to every sample"
            )
        if ALL in groups:
            raise ValueError(
                f"grouped(group_key={group_key!r}): a group is named {ALL!r}, which is "
                "the overall value's name; rename that metadata value"
            )
        result = {name: metric(groups[name]) for name in sorted(groups)}
        result[ALL] = metric(scores)
        return result

    info = registry_info(metric)
    inner = info.name if info is not None else getattr(metric, "__name__", "metric")
    setattr(compute, LABEL_ATTR, f"{inner}_by_{group_key}")
    return compute
