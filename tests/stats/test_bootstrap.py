"""Bootstrap intervals for mean scores: reproducible, order-free, clustered by sample."""

from __future__ import annotations

import random

import msgspec
import pytest

from assay.score import MeanEstimate, MetricsBuilder, bootstrap_mean


def _means(
    values: list[float], repetitions: int = 1, planned: int | None = None
) -> MeanEstimate | None:
    builder = MetricsBuilder({"t": planned or len(values)}, ["f1"], repetitions=repetitions)
    for i, value in enumerate(values):
        builder.add_trial("t", "completed")
        status = "passed" if value >= 1.0 else "failed"
        builder.add_score("t", "f1", status, sample_id=f"s{i // repetitions}", value=value)
    return builder.build().mean_of("t", "f1")


def _values(n: int, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [0.0 if rng.random() < 0.4 else round(rng.random(), 3) for _ in range(n)]


def test_the_interval_brackets_the_mean_and_names_its_method() -> None:
    est = _means(_values(400))
    assert est is not None
    assert est.ci_method == "bootstrap-percentile" and est.resamples == 1000
    assert est.ci_low < est.value < est.ci_high
    assert est.samples == 400 and est.denominator == 400
    assert 0.5 * est.stderr < (est.ci_high - est.ci_low) / (2 * 1.96) < 2 * est.stderr


def test_rescoring_reproduces_the_interval_byte_for_byte() -> None:
    values = _values(300)
    first = msgspec.json.encode(_means(values))
    assert msgspec.json.encode(_means(values)) == first
    shuffled = values[:]
    random.Random(9).shuffle(shuffled)  # a resumed run meets the samples in another order
    assert msgspec.json.encode(_means(shuffled)) == first


def test_other_seeds_give_other_but_close_intervals() -> None:
    values = _values(300)
    a = bootstrap_mean(values, 0.95, seed=1)
    b = bootstrap_mean(values, 0.95, seed=2)
    assert a[0] == b[0] and a[2:] != b[2:]
    assert a[2] == pytest.approx(b[2], abs=0.02)


def test_pass_fail_scores_get_no_mean_estimate() -> None:
    assert _means([1.0, 0.0, 1.0, 1.0]) is None


def test_repetitions_resample_samples_not_trials() -> None:
    # each sample repeats its value: 3 repetitions carry one sample's evidence, not three
    per_sample = _values(100)
    repeated = [v for v in per_sample for _ in range(3)]
    clustered = _means(repeated, repetitions=3)
    once = _means(per_sample)
    assert clustered is not None and once is not None
    assert clustered.ci_method == "cluster-bootstrap-percentile" and clustered.samples == 100
    assert clustered.value == pytest.approx(once.value)
    assert clustered.ci_high - clustered.ci_low == pytest.approx(
        once.ci_high - once.ci_low, rel=0.15
    )
    naive = bootstrap_mean(repeated, 0.95, seed=clustered.seed)
    assert naive[3] - naive[2] < 0.75 * (clustered.ci_high - clustered.ci_low)


def test_unscored_samples_count_as_zero() -> None:
    est = _means([0.5, 0.5], planned=4)
    assert est is not None and est.value == 0.25 and est.samples == 4


def test_fewer_than_two_samples_give_the_whole_range() -> None:
    assert bootstrap_mean([0.3], 0.95, seed=0) == (0.3, 0.0, 0.0, 1.0)
    assert bootstrap_mean([], 0.95, seed=0) == (0.0, 0.0, 0.0, 1.0)


def test_a_constant_score_has_a_point_interval() -> None:
    mean, stderr, low, high = bootstrap_mean([0.5] * 50, 0.95, seed=0)
    assert (mean, stderr, low, high) == (0.5, 0.0, 0.5, 0.5)


def test_pass_fail_values_kept_compactly_give_the_same_interval_once_one_is_not() -> None:
    """Values are kept a byte each while they are 0 or 1, floats from the first that is
    not: the interval is the one computed from the floats themselves."""
    values = [float(i % 3 == 0) for i in range(500)] + [0.25, 1.0, 0.0, 0.75]
    est = _means(values)
    assert est is not None
    mean, stderr, low, high = bootstrap_mean(values, est.ci_level, est.seed)
    assert (est.value, est.stderr, est.ci_low, est.ci_high) == (mean, stderr, low, high)
    clustered = _means([v for v in values for _ in range(2)], repetitions=2)
    assert clustered is not None and clustered.value == pytest.approx(mean)
