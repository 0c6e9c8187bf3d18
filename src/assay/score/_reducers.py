"""Epoch reducers: one value per sample out of its epochs' values.

A sample run for several epochs has several scores; metrics want one per sample, so
a reducer folds them first (before ``accuracy`` or ``stderr`` see anything). Reducers
are named, as in Inspect AI, so ``Epochs(5, "pass_at_2")`` can be written in a task
and rebuilt from a run's spec: ``get_reducer`` turns the name back into the function.
An epoch counts as correct when its value is at least 1.0 (a ``C``).
"""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from assay.score._score import Score

Reducer = Callable[[list[float]], float]

ScoreReducer = Callable[[list["Score"]], "Score"]
"""Inspect's form of a reducer: one sample's epoch scores -> its one score."""

REDUCER_NAME_ATTR = "__assay_reducer__"
_custom: dict[str, Callable[[], ScoreReducer]] = {}
F = TypeVar("F", bound=Callable[..., Any])


@overload
def score_reducer(factory: F, *, name: str | None = None) -> F: ...
@overload
def score_reducer(factory: None = None, *, name: str | None = None) -> Callable[[F], F]: ...
def score_reducer(factory: F | None = None, *, name: str | None = None) -> Any:
    """Register a custom epoch reducer, as Inspect's ``@score_reducer``: a factory
    returning ``reduce(scores: list[Score]) -> Score``.

    Use it by name (``Epochs(5, "my_reducer")``) or by what the factory makes
    (``Epochs(5, my_reducer())``); the run's spec records the name, so ``assay score``
    and ``resume`` find it again once the task file is loaded. It gets each epoch's
    Score (its ``answer``, ``explanation`` and ``metadata`` as the scorer gave them;
    its value on the metrics' scale: letters as 1, 0.5, 0, and a dict-valued score's
    keys each reduced on their own), and the value it returns is read the same way.
    """

    def register(made_by: F) -> F:
        reducer_name = name or made_by.__name__

        @functools.wraps(made_by)
        def make(*args: Any, **kwargs: Any) -> Any:
            reducer = made_by(*args, **kwargs)
            setattr(reducer, REDUCER_NAME_ATTR, reducer_name)
            return reducer

        _custom[reducer_name] = make
        return make  # type: ignore[return-value]

    return register(factory) if factory is not None else register


def reducer_name(reducer: object) -> str:
    """The name an epoch reducer is recorded under: a name as given, a ``@score_reducer``
    product's registered name, or a built-in reducer function's name (``pass_at_2``)."""
    if isinstance(reducer, str):
        return reducer
    registered = getattr(reducer, REDUCER_NAME_ATTR, None)
    if isinstance(registered, str):
        return registered
    return str(getattr(reducer, "__name__", reducer))


def _from_scores(reduce: ScoreReducer) -> Reducer:
    """A ``list[Score] -> Score`` reducer as one over the epochs' float values."""
    from assay.score._score import Score, value_to_float

    def reduce_values(values: list[float]) -> float:
        return value_to_float(reduce([Score(value=v) for v in values]).value)

    return reduce_values


def mean_reducer(values: list[float]) -> float:
    """The mean over epochs (the default): the expected score of one attempt."""
    return math.fsum(values) / len(values) if values else 0.0


def median_reducer(values: list[float]) -> float:
    """The median over epochs: robust to one odd epoch."""
    return float(statistics.median(values)) if values else 0.0


def mode_reducer(values: list[float]) -> float:
    """The most common value (the first seen on a tie): a majority vote over epochs."""
    return float(statistics.mode(values)) if values else 0.0


def max_reducer(values: list[float]) -> float:
    """The best epoch: whether the model can get it right at all."""
    return max(values, default=0.0)


REDUCERS: dict[str, Reducer] = {
    "mean": mean_reducer,
    "median": median_reducer,
    "mode": mode_reducer,
    "max": max_reducer,
}


def _correct(values: list[float]) -> int:
    return sum(1 for v in values if v >= 1.0)


def _check_k(name: str, k: int) -> None:
    if k < 1:
        raise ValueError(f"{name}({k}): k must be at least 1")


def pass_at_k(k: int) -> Reducer:
    """The chance that at least one of *k* epochs drawn from the *n* run is correct.

    The unbiased estimator of Chen et al. (2021), ``1 - C(n - c, k) / C(n, k)`` with
    *c* correct epochs. It needs n >= k: fewer epochs than *k* cannot estimate it, and
    that is an error rather than a quietly wrong number.
    """
    _check_k("pass_at_k", k)

    def reduce(values: list[float]) -> float:
        n, c = len(values), _correct(values)
        if n < k:
            raise ValueError(f"pass_at_{k} needs at least {k} epochs per sample, got {n}")
        if n - c < k:
            return 1.0
        return 1.0 - math.comb(n - c, k) / math.comb(n, k)

    reduce.__name__ = reduce.__qualname__ = f"pass_at_{k}"
    return reduce


def at_least_k(k: int) -> Reducer:
    """1.0 when at least *k* epochs are correct, else 0.0: a consistency bar."""
    _check_k("at_least_k", k)

    def reduce(values: list[float]) -> float:
        return 1.0 if _correct(values) >= k else 0.0

    reduce.__name__ = reduce.__qualname__ = f"at_least_{k}"
    return reduce


def _named(name: str) -> Reducer:
    """The built-in reducer *name*, marked with its name (what the spec records)."""
    reduce = get_reducer(name)
    setattr(reduce, REDUCER_NAME_ATTR, name)
    return reduce


def mean_score() -> Reducer:
    """Inspect's name for the ``mean`` reducer (``Epochs(5, mean_score())``)."""
    return _named("mean")


def median_score() -> Reducer:
    """Inspect's name for the ``median`` reducer."""
    return _named("median")


def mode_score() -> Reducer:
    """Inspect's name for the ``mode`` reducer."""
    return _named("mode")


def max_score() -> Reducer:
    """Inspect's name for the ``max`` reducer."""
    return _named("max")


def pass_at(k: int) -> Reducer:
    """Inspect's name for ``pass_at_k(k)``: recorded as ``pass_at_<k>``."""
    return _named(f"pass_at_{k}")


def at_least(k: int) -> Reducer:
    """Inspect's name for ``at_least_k(k)``: recorded as ``at_least_<k>``."""
    return _named(f"at_least_{k}")


_WITH_K = re.compile(r"(pass_at|at_least)_([0-9]+)")
_MADE_WITH_K: dict[str, Callable[[int], Reducer]] = {
    "pass_at": pass_at_k,
    "at_least": at_least_k,
}


def get_score_reducer(name: str) -> ScoreReducer | None:
    """The ``@score_reducer`` registered as *name*, made (Inspect's ``list[Score] ->
    Score`` form, which wants each epoch's whole Score); ``None`` for a built-in name."""
    return _custom[name]() if name in _custom else None


def get_reducer(name: str) -> Reducer:
    """The reducer named *name*: ``mean``, ``median``, ``mode``, ``max``,
    ``pass_at_<k>`` or ``at_least_<k>`` (e.g. ``pass_at_2``)."""
    if name in REDUCERS:
        return REDUCERS[name]
    if name in _custom:
        return _from_scores(_custom[name]())
    found = _WITH_K.fullmatch(name)
    if found is not None:
        return _MADE_WITH_K[found.group(1)](int(found.group(2)))
    known = ", ".join([*REDUCERS, "pass_at_<k>", "at_least_<k>", *_custom])
    raise ValueError(f"unknown epoch reducer {name!r}; use one of: {known}")
