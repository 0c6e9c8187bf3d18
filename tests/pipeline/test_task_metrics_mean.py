"""Task metrics of one epoch reduced by the mean alone store a scalar score at once
(``TaskMetricsBuilder.add``): the same stored values, to the bit, and the same metrics as
the general way (``_reduce`` of a one-value list), keyed scores and errors included."""

from __future__ import annotations

import math
from array import array
from typing import Any

from assay.pipeline._task_metrics import TaskMetricsBuilder
from assay.score import accuracy, stderr

SCORES: list[tuple[float | None, str, dict[str, float] | None]] = [
    (1.0, "passed", None),
    (-0.0, "failed", None),  # fsum gives 0.0 for -0.0: so must the short way
    (0.5, "failed", None),
    (None, "unscorable", None),
    (1.0, "error", None),  # an error counts 0
    (0.25, "failed", None),
]


def _fed(short: bool) -> TaskMetricsBuilder:
    metrics: dict[str, Any] = {s: {"accuracy": accuracy(), "stderr": stderr()} for s in "ab"}
    builder = TaskMetricsBuilder(1, ["mean"], metrics, 40, targets=2)
    builder._mean_only = short  # the general way when False
    for index in range(80):
        value, status, _ = SCORES[index % len(SCORES)]
        trial = {"index": index, "target_id": f"t{index % 2}"}
        builder.add(trial, "a", value, status)
        keyed = {"x": 1.0, "y": 0.0} if index % 5 else None  # then an error: 0 by key
        builder.add(trial, "b", value, status if keyed else "error", keyed)
    return builder


def _bits(values: array[float]) -> list[int]:
    return [int(math.copysign(1, v)) for v in values]


def test_one_epoch_by_the_mean_stores_what_the_general_way_stores() -> None:
    short, general = _fed(True), _fed(False)
    assert short._mean_stores and not general._mean_stores
    assert short._values.keys() == general._values.keys()
    for key, values in general._values.items():
        assert short._values[key] == values and _bits(short._values[key]) == _bits(values)
    assert short._scored == general._scored
    ids = [f"s{i}" for i in range(40)]
    assert short.build(ids) == general.build(ids)
