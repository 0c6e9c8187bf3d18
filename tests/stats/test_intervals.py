"""Wilson intervals and the stderr clustered by sample, as MetricsBuilder reports them."""

from __future__ import annotations

import math

import pytest

from assay.score import MetricEstimate, MetricsBuilder


def _estimate(
    passes: list[bool], repetitions: int = 1, planned: int | None = None
) -> MetricEstimate:
    builder = MetricsBuilder({"t": planned or len(passes)}, ["exact"], repetitions=repetitions)
    for i, ok in enumerate(passes):
        builder.add_trial("t", "completed")
        builder.add_score(
            "t", "exact", "passed" if ok else "failed", sample_id=f"s{i // repetitions}"
        )
    return builder.build().estimate("t", "exact")


def test_wilson_matches_the_textbook_values() -> None:
    est = _estimate([True] * 90 + [False] * 10)
    assert est.ci_method == "wilson" and est.ci_level == 0.95
    assert est.ci_low == pytest.approx(0.8256, abs=1e-4)
    assert est.ci_high == pytest.approx(0.9448, abs=1e-4)


@pytest.mark.parametrize(("passed", "n"), [(0, 10), (10, 10), (0, 1), (1, 1)])
def test_wilson_never_leaves_zero_one_and_is_never_empty(passed: int, n: int) -> None:
    est = _estimate([True] * passed + [False] * (n - passed))
    assert 0.0 <= est.ci_low < est.ci_high <= 1.0
    assert est.ci_low <= est.value <= est.ci_high


def test_interval_is_over_the_planned_denominator() -> None:
    est = _estimate([True] * 5, planned=10)  # five trials never ran
    assert est.value == 0.5
    assert est.ci_low < 0.5 < est.ci_high


def test_interval_at_another_level_is_wider_or_narrower() -> None:
    est = _estimate([True] * 80 + [False] * 20)
    low99, high99 = est.interval(0.99)
    low90, high90 = est.interval(0.90)
    assert low99 < est.ci_low < low90 and high90 < est.ci_high < high99


def test_no_cluster_stderr_without_repetitions() -> None:
    assert _estimate([True, False]).cluster_stderr is None


def test_cluster_stderr_is_the_stderr_of_sample_means() -> None:
    # samples always pass or always fail: 3 reps each, 4 of 10 samples pass
    passes = [s < 4 for s in range(10) for _ in range(3)]
    est = _estimate(passes, repetitions=3)
    expected = math.sqrt(0.4 * 0.6 * 10 / 9 / 10)
    assert est.cluster_stderr == pytest.approx(expected)
    assert est.cluster_stderr > est.stderr  # correlated trials


def test_cluster_counters_are_dropped_as_samples_end() -> None:
    builder = MetricsBuilder({"t": 3000}, ["exact"], repetitions=3)
    for i in range(3000):
        builder.add_score("t", "exact", "passed", sample_id=f"s{i // 3}")
        assert len(builder.clusters[("t", "exact")].pending) <= 1


def test_samples_cut_short_count_their_unrun_trials_as_fails() -> None:
    builder = MetricsBuilder({"t": 6}, ["exact"], repetitions=3)
    for sample in ("a", "a", "a", "b"):
        builder.add_score("t", "exact", "passed", sample_id=sample)
    est = builder.build().estimate("t", "exact")
    # sample means 1 and 1/3 -> sd of two values, over sqrt(2)
    assert est.cluster_stderr == pytest.approx(math.sqrt(((1 - 1 / 3) ** 2 / 2) / 2))
