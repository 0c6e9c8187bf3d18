"""The sequential gate's confidence sequence: its error over a whole run of looks, and
the pure-Python code against an independent vectorised computation of the same rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import betaln

from assay.gate._sequential import (
    Monitor,
    SequentialPlan,
    confidence_sequence,
    decide_check,
    log_mixture,
    prior_for,
    threshold,
)
from assay.spec import DatasetRef, EvalSpec, GatePolicy, ScorerSpec, TargetSpec

ALPHA = 0.05
EVERY = 10
SAMPLES = 300


def first_decisions(fractions: np.ndarray, minimum: float, checks: int = 1) -> np.ndarray:
    """For each simulated run (a row of per-sample pass fractions, in plan order): +1 if
    its first decisive look says passed, -1 failed, 0 if no look decides (numpy, scipy)."""
    a, b = prior_for(minimum)
    sums = np.cumsum(fractions, axis=1)[:, EVERY - 1 :: EVERY]
    t = np.arange(EVERY, fractions.shape[1] + 1, EVERY, dtype=float)[None, :]
    log_m = (
        betaln(a + sums, b + t - sums)
        - betaln(a, b)
        - sums * math.log(minimum)
        - (t - sums) * math.log1p(-minimum)
    )
    decisive = log_m >= threshold(ALPHA, checks)
    anywhere = decisive.any(axis=1)
    first = decisive.argmax(axis=1)
    rows = np.arange(len(fractions))
    above = sums[rows, first] / t[0, first] > minimum
    return np.where(anywhere, np.where(above, 1, -1), 0)


def per_sample_fractions(
    rng: np.random.Generator, runs: int, rate: float, repetitions: int, icc: float
) -> np.ndarray:
    """Per-sample pass fractions of *runs* runs at true rate *rate*: each sample has its
    own rate (Beta, intra-sample correlation *icc*) and *repetitions* trials."""
    if repetitions == 1 or icc == 0:
        own = np.full((runs, SAMPLES), rate)
    else:
        strength = (1 - icc) / icc
        own = rng.beta(rate * strength, (1 - rate) * strength, size=(runs, SAMPLES))
    return rng.binomial(repetitions, own) / repetitions


@pytest.mark.parametrize("minimum", [0.5, 0.9, 0.99])
@pytest.mark.parametrize(("repetitions", "icc"), [(1, 0.0), (5, 0.3), (5, 0.9)])
def test_false_pass_over_every_look_stays_below_alpha_at_the_minimum(
    minimum: float, repetitions: int, icc: float
) -> None:
    """A target exactly at its minimum, looked at after every 10 samples up to 300: the
    chance that the procedure ever says passed is at most α/2 (+ simulation error)."""
    rng = np.random.default_rng(13)
    fractions = per_sample_fractions(rng, 8000, minimum, repetitions, icc)
    decisions = first_decisions(fractions, minimum)
    false_pass = float(np.mean(decisions == 1))
    assert false_pass <= ALPHA / 2 + 0.005, false_pass


def test_many_looks_without_the_sequence_would_pass_too_often() -> None:
    """The control: the same looks with a fixed-n 95% interval (normal, one look's
    quantile) pass a target at the minimum far more often than α/2, which is what the
    confidence sequence is for."""
    rng = np.random.default_rng(7)
    minimum = 0.9
    fractions = per_sample_fractions(rng, 8000, minimum, 1, 0.0)
    sums = np.cumsum(fractions, axis=1)[:, EVERY - 1 :: EVERY]
    t = np.arange(EVERY, SAMPLES + 1, EVERY)[None, :]
    rate = sums / t
    low = rate - 1.96 * np.sqrt(np.maximum(rate * (1 - rate), 1e-12) / t)
    naive = float(np.mean((low >= minimum).any(axis=1)))
    sequential = float(np.mean(first_decisions(fractions, minimum) == 1))
    assert naive > 2 * ALPHA and sequential <= ALPHA / 2


def test_the_pure_python_rule_decides_as_the_vectorised_one() -> None:
    """``decide_check`` (lgamma, pure Python) against the scipy computation, on random
    prefixes: the same decision every time, so the calibration above is about the code."""
    rng = np.random.default_rng(3)
    level = threshold(ALPHA, 1)
    for _ in range(400):
        minimum = float(rng.choice([0.5, 0.8, 0.9, 0.95, 0.99]))
        samples = int(rng.integers(1, 400))
        passed = float(rng.integers(0, samples + 1)) / float(rng.choice([1, 2, 5]))
        passed = min(passed, samples)
        a, b = prior_for(minimum)
        log_m = (
            betaln(a + passed, b + samples - passed)
            - betaln(a, b)
            - passed * math.log(minimum)
            - (samples - passed) * math.log1p(-minimum)
        )
        if abs(log_m - level) < 1e-9:
            continue  # on the edge: rounding may go either way
        expected = (
            "undecided" if log_m < level else ("passed" if passed / samples > minimum else "failed")
        )
        assert decide_check(passed, samples, minimum, level) == expected


@pytest.mark.parametrize(("passed", "samples"), [(0, 10), (97, 100), (10, 10), (45.5, 60)])
def test_the_sequence_is_the_set_of_rates_below_the_threshold(passed: float, samples: int) -> None:
    """Its ends are where M_t crosses 2/α (or 0 and 1), and the observed rate is inside."""
    prior = prior_for(0.9)
    level = threshold(ALPHA, 1)
    low, high = confidence_sequence(passed, samples, level, prior)
    assert low <= passed / samples <= high
    for end, outward in ((low, -1e-6), (high, 1e-6)):
        if 0.0 < end < 1.0:
            assert log_mixture(passed, samples, end, prior) < level
            assert log_mixture(passed, samples, end + outward, prior) >= level


def test_more_checks_need_more_evidence() -> None:
    """Bonferroni over the gated checks: with 10 checks the sequence is wider."""
    prior = prior_for(0.9)
    one = confidence_sequence(95, 100, threshold(ALPHA, 1), prior)
    ten = confidence_sequence(95, 100, threshold(ALPHA, 10), prior)
    assert ten[0] < one[0] and ten[1] > one[1]


@pytest.mark.doc(
    "docs/spec.md",
    "A check with a blocked, invalid, unscorable or errored trial in the prefix stays undecided.",
)
@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("blocked", "unscorable"),
        ("invalid", "unscorable"),
        ("completed", "error"),
        ("completed", "unscorable"),
    ],
)
def test_a_check_with_bad_evidence_in_the_prefix_stays_undecided(state: str, status: str) -> None:
    """40 samples that all pass decide a minimum of 0.5; one bad trial among them keeps
    its target undecided (and so the run going), while the other target decides."""
    spec = _spec(samples=40, targets=("a", "b"))
    monitor = Monitor(SequentialPlan(spec, ["exact"]))
    for index in range(80):
        target = "ab"[index % 2]
        bad = index == 7
        monitor.add(
            index, target, state if bad else "completed", {"exact": status if bad else "passed"}
        )
    last = monitor.looks[-1]
    decisions = {c.target: (c.decision, c.problems) for c in last.checks}
    assert decisions == {"a": ("passed", 0), "b": ("undecided", 1)}
    assert not monitor.stopped and len(monitor.looks) == 4


def _spec(samples: int, targets: tuple[str, ...]) -> EvalSpec:
    return EvalSpec(
        evaluation="e",
        dataset=DatasetRef("data.jsonl", "sha256:0", samples),
        targets=tuple(TargetSpec(t, "callable", callable="m:f") for t in targets),
        scorers=(ScorerSpec("exact", "exact"),),
        gate=GatePolicy(minimum=0.5, confidence=0.95, sequential=True),
    )


def test_a_slow_first_sample_completing_several_looks_at_once_stops_the_run_once() -> None:
    """Under load the first sample of the plan can finish last: its trial then completes
    every look at once, the last of which decides. The run records each look, and one
    ``stopped`` event at the deciding look (two made verify refuse the run)."""
    from types import SimpleNamespace

    from assay.pipeline._run import _Run

    spec = _spec(samples=100, targets=("a",))
    events: list[tuple[str, dict[str, object]]] = []
    stops: list[bool] = []
    run = SimpleNamespace(
        monitor=Monitor(SequentialPlan(spec, ["exact"])),
        run_event=lambda kind, data: events.append((kind, data)),
        queue=SimpleNamespace(stop=lambda: stops.append(True)),
    )
    passed = [{"scorer_id": "exact", "status": "passed"}]
    for index in range(1, 60):  # every sample but the first: no look can be made yet
        _Run.observe(run, index, "a", "completed", passed)  # type: ignore[arg-type]
    assert events == []
    _Run.observe(run, 0, "a", "completed", passed)  # type: ignore[arg-type]
    kinds = [kind for kind, _ in events]
    assert kinds.count("stopped") == 1 and kinds[-1] == "stopped"
    assert kinds.count("look") >= 2
    assert events[-1][1]["samples"] == events[-2][1]["samples"]
    assert stops == [True]
