"""Epoch reducers: one value per sample out of its epochs' values."""

from __future__ import annotations

import statistics
from collections.abc import Callable

Reducer = Callable[[list[float]], float]


def mean_reducer(values: list[float]) -> float:
    """The mean over epochs (the default)."""
    return sum(values) / len(values) if values else 0.0


REDUCERS: dict[str, Reducer] = {
    "mean": mean_reducer,
    "median": lambda values: float(statistics.median(values)) if values else 0.0,
    "max": lambda values: max(values, default=0.0),
    "mode": lambda values: float(statistics.mode(values)) if values else 0.0,
}


def get_reducer(name: str) -> Reducer:
    """The reducer named *name* (``mean``, ``median``, ``max``, ``mode``,
    ``pass_at_<k>``, ``at_least_<k>``)."""
    return REDUCERS[name]
