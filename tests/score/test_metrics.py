"""Metrics against values computed another way: the statistics module, by hand, by theory."""

from __future__ import annotations

import math
import random
import statistics
import sys

import pytest

from assay._registry import registry_info
from assay.score import (
    MetricsBuilder,
    SampleScore,
    accuracy,
    bootstrap_stderr,
    grouped,
    mean,
    std,
    stderr,
)


def scores(values: list[float], **metadata: list[object]) -> list[SampleScore]:
    return [
        SampleScore(v, f"s{i}", {k: vs[i] for k, vs in metadata.items()})
        for i, v in enumerate(values)
    ]


VALUES = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.25]


def test_accuracy_and_mean() -> None:
    assert accuracy()(scores(VALUES)) == pytest.approx(sum(VALUES) / len(VALUES))
    assert mean()(scores(VALUES)) == pytest.approx(statistics.fmean(VALUES))
    assert accuracy()([]) == 0.0


def test_std_and_stderr_agree_with_the_statistics_module() -> None:
    rng = random.Random(7)
    for n in (2, 3, 10, 257):
        values = [rng.random() for _ in range(n)]
        assert std()(scores(values)) == pytest.approx(statistics.stdev(values))
        assert stderr()(scores(values)) == pytest.approx(statistics.stdev(values) / math.sqrt(n))


def test_spread_of_fewer_than_two_samples_is_zero() -> None:
    for metric in (std(), stderr(), bootstrap_stderr()):
        assert metric([]) == 0.0
        assert metric(scores([1.0])) == 0.0


def test_spread_of_identical_values_is_zero() -> None:
    same = scores([0.5] * 50)
    assert std()(same) == 0.0 and stderr()(same) == 0.0 and bootstrap_stderr()(same) == 0.0


def bernoulli(n: int, p: float, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [1.0 if rng.random() < p else 0.0 for _ in range(n)]


def test_bootstrap_stderr_is_close_to_the_analytic_value_and_seeded() -> None:
    values = bernoulli(400, 0.3)
    # The bootstrap estimates the population sd of the mean: pstdev / sqrt(n).
    expected = statistics.pstdev(values) / math.sqrt(len(values))
    got = bootstrap_stderr(num_samples=2000, seed=3)(scores(values))
    assert got == pytest.approx(expected, rel=0.08)
    assert bootstrap_stderr(num_samples=2000, seed=3)(scores(values)) == got
    assert bootstrap_stderr(num_samples=2000, seed=4)(scores(values)) != got


def test_bootstrap_stderr_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")  # compares the numpy path with the fallback
    values = bernoulli(300, 0.6)
    with_numpy = bootstrap_stderr(num_samples=1500)(scores(values))
    monkeypatch.setitem(sys.modules, "numpy", None)  # importing it now raises ImportError
    fallback = bootstrap_stderr(num_samples=1500)(scores(values))
    assert fallback != with_numpy  # a different generator ...
    assert fallback == pytest.approx(with_numpy, rel=0.1)  # ... estimating the same thing
    assert bootstrap_stderr(num_samples=1500)(scores(values)) == fallback


def test_bootstrap_stderr_resamples_in_bounded_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.score import _stats

    values = bernoulli(500, 0.5)
    whole = bootstrap_stderr(num_samples=300)(scores(values))
    monkeypatch.setattr(_stats, "_BOOTSTRAP_CHUNK", 500 * 7)  # 7 resamples per chunk
    chunked = bootstrap_stderr(num_samples=300)(scores(values))
    assert chunked == pytest.approx(whole, rel=0.15)


def test_bootstrap_stderr_refuses_no_resamples() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        bootstrap_stderr(num_samples=0)


def test_grouped_by_a_metadata_key() -> None:
    data = scores([1.0, 0.0, 1.0, 1.0, 0.0], subject=["b", "a", "b", "a", 3])
    assert grouped(accuracy(), "subject")(data) == {"3": 0.0, "a": 0.5, "b": 1.0, "all": 0.6}
    assert list(grouped(accuracy(), "subject")(data)) == ["3", "a", "b", "all"]
    spread = grouped(stderr(), "subject")(data)
    assert spread["a"] == pytest.approx(statistics.stdev([0.0, 1.0]) / math.sqrt(2))
    assert spread["3"] == 0.0


def test_grouped_needs_the_key_on_every_sample() -> None:
    data = [SampleScore(1.0, "s0", {"subject": "a"}), SampleScore(0.0, "s1", {})]
    with pytest.raises(ValueError, match=r"1 sample\(s\) have no 'subject'.*\(s1\)"):
        grouped(accuracy(), "subject")(data)


def test_grouped_refuses_a_group_named_all() -> None:
    with pytest.raises(ValueError, match="rename"):
        grouped(mean(), "split")(scores([1.0], split=["all"]))


def test_metrics_are_registered_with_their_arguments() -> None:
    info = registry_info(bootstrap_stderr(num_samples=10, seed=2))
    assert info is not None
    assert (info.kind, info.name, info.args) == (
        "metric",
        "bootstrap_stderr",
        {
            "num_samples": 10,
            "seed": 2,
        },
    )
    nested = registry_info(grouped(accuracy(), "subject"))
    assert nested is not None
    assert nested.args["metric"] == {"$registered": "metric", "name": "accuracy", "args": {}}
    assert nested.args["group_key"] == "subject"


def test_grouped_metrics_are_labelled_by_metric_and_key() -> None:
    from assay.score import metric_label

    assert metric_label(grouped(accuracy(), "topic"), "m") == "accuracy_by_topic"
    assert metric_label(grouped(stderr(), "topic"), "m") == "stderr_by_topic"
    assert metric_label(accuracy(), "m") == "accuracy"
    assert metric_label(lambda scores: 0.0, "fallback") == "<lambda>"


def test_add_pass_counts_as_add_score_of_a_pass_or_fail() -> None:
    """``add_pass`` (the judge's pass/fail verdicts) builds the metrics ``add_score``
    builds: bytes kept in place, then a continuous value, and with repetitions."""
    for repetitions in (1, 2):
        short = MetricsBuilder({"t": 12}, ["s"], repetitions)
        general = MetricsBuilder({"t": 12}, ["s"], repetitions)
        for index in range(12):
            sample = f"s{index // repetitions}"
            if index == 7:  # a partial credit: values are floats from here on
                for builder in (short, general):
                    builder.add_score("t", "s", "failed", sample, 0.5)
                continue
            passed = index % 3 != 0
            short.add_pass("t", "s", passed, sample)
            status, value = ("passed", 1.0) if passed else ("failed", 0.0)
            general.add_score("t", "s", status, sample, value)
        assert short.build() == general.build()
        assert short.means[("t", "s")].values == general.means[("t", "s")].values


def test_add_pass_with_a_state_counts_the_trial_as_add_trial_does() -> None:
    """``add_pass`` given the trial's state (the judge's one call a trial) also counts
    it as ``add_trial`` does, on the in-place way and the general one alike."""
    for repetitions in (1, 2):
        short = MetricsBuilder({"t": 8, "u": 8}, ["s"], repetitions)
        general = MetricsBuilder({"t": 8, "u": 8}, ["s"], repetitions)
        for index in range(16):
            target, passed = "tu"[index % 2], index % 3 != 0
            state = "blocked" if index == 5 else "completed"
            short.add_pass(target, "s", passed, f"s{index // 2}", state)
            general.add_pass(target, "s", passed, f"s{index // 2}")
            general.add_trial(target, state)
        assert short.build() == general.build()
        assert short.states == general.states and short.states["u"]["blocked"] == 1
