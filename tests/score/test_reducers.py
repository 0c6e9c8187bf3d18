"""Every epoch reducer, with pass@k checked against counting the k-subsets outright."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest

from assay.score import at_least_k, get_reducer, pass_at_k


def pass_at_k_by_counting(values: list[float], k: int) -> float:
    """The share of k-epoch subsets with at least one correct epoch: pass@k by definition."""
    subsets = list(itertools.combinations(values, k))
    return sum(1 for s in subsets if any(v >= 1.0 for v in s)) / len(subsets)


def pass_at_k_by_product(n: int, c: int, k: int) -> float:
    """Chen et al.'s numerically stable product form."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@pytest.mark.parametrize(
    ("name", "values", "expected"),
    [
        ("mean", [1.0, 0.0, 0.5, 1.0], 0.625),
        ("median", [1.0, 0.0, 0.5, 1.0], 0.75),
        ("median", [0.0, 1.0, 0.25], 0.25),
        ("mode", [0.0, 1.0, 1.0, 0.5], 1.0),
        ("mode", [0.5, 0.0, 0.0, 0.5], 0.5),  # a tie: the first seen
        ("max", [0.0, 0.25, 0.5], 0.5),
    ],
)
def test_simple_reducers(name: str, values: list[float], expected: float) -> None:
    assert get_reducer(name)(values) == pytest.approx(expected)


@pytest.mark.parametrize("name", ["mean", "median", "mode", "max"])
def test_simple_reducers_of_no_epochs_are_zero(name: str) -> None:
    assert get_reducer(name)([]) == 0.0


def test_the_mean_agrees_with_the_statistics_module() -> None:
    values = [0.1] * 10 + [1.0, 0.0, 0.7]
    assert get_reducer("mean")(values) == statistics.fmean(values)


def test_pass_at_k_matches_counting_subsets_and_the_product_form() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            values = [1.0] * c + [0.0, 0.5] * n
            values = values[:n]  # c correct, the rest wrong or partial (not correct)
            for k in range(1, n + 1):
                got = pass_at_k(k)(values)
                assert got == pytest.approx(pass_at_k_by_counting(values, k)), (n, c, k)
                assert got == pytest.approx(pass_at_k_by_product(n, c, k)), (n, c, k)
                assert get_reducer(f"pass_at_{k}")(values) == got


def test_pass_at_k_known_values() -> None:
    assert pass_at_k(1)([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert pass_at_k(2)([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.5)
    assert pass_at_k(2)([0.0] * 10) == 0.0
    assert pass_at_k(3)([1.0, 1.0, 0.0, 0.0]) == 1.0
    # large n: exact integer binomials, no overflow
    many = [1.0] * 3 + [0.0] * 197
    assert pass_at_k(10)(many) == pytest.approx(pass_at_k_by_product(200, 3, 10))


def test_pass_at_k_needs_k_epochs() -> None:
    with pytest.raises(ValueError, match="pass_at_3 needs at least 3 epochs per sample, got 2"):
        pass_at_k(3)([1.0, 0.0])


def test_at_least_k() -> None:
    assert at_least_k(2)([1.0, 0.0, 1.0]) == 1.0
    assert at_least_k(3)([1.0, 0.0, 1.0]) == 0.0
    assert at_least_k(1)([0.5, 0.9]) == 0.0  # partial credit is not correct
    assert at_least_k(1)([]) == 0.0
    assert get_reducer("at_least_3")([1.0, 1.0, 1.0, 0.0]) == 1.0
    assert get_reducer("at_least_3")([1.0, 1.0, 0.0, 0.0]) == 0.0


def test_reducers_made_with_k_are_named_after_it() -> None:
    assert get_reducer("pass_at_2").__name__ == "pass_at_2"
    assert at_least_k(4).__name__ == "at_least_4"


@pytest.mark.parametrize("name", ["nope", "pass_at", "pass_at_x", "at_least_", "Mean", "max_2"])
def test_unknown_reducers_list_the_known_ones(name: str) -> None:
    with pytest.raises(ValueError) as raised:
        get_reducer(name)
    message = str(raised.value)
    assert repr(name) in message
    assert "mean, median, mode, max, pass_at_<k>, at_least_<k>" in message


@pytest.mark.parametrize("name", ["pass_at_0", "at_least_0"])
def test_k_must_be_positive(name: str) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        get_reducer(name)
