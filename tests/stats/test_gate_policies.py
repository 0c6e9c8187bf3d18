"""Gate policies: the confident threshold and min_samples, after the evidence checks."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from assay.errors import ConfigError
from assay.gate import decide
from assay.score import Metrics, MetricsBuilder
from assay.spec import GatePolicy, load_spec
from tests.helpers import simple_spec


def metrics_of(passed: int, failed: int, other: str | None = None) -> Metrics:
    builder = MetricsBuilder({"a": passed + failed + (other is not None)}, ["exact"])
    for status in ["passed"] * passed + ["failed"] * failed + ([other] if other else []):
        builder.add_trial("a", "completed")
        builder.add_score("a", "exact", status)
    return builder.build()


CONFIDENT = GatePolicy(minimum=0.9, confidence=0.95)


@pytest.mark.doc(
    "docs/spec.md",
    "4. with `confidence`: the exact (Clopper–Pearson) interval of the pass rate at that "
    "level — `passed` only when its lower bound reaches the minimum",
)
def test_confident_pass_needs_the_lower_bound_above_the_minimum() -> None:
    decision = decide(CONFIDENT, metrics_of(990, 10), ["exact"])
    assert decision.status == "passed"
    numbers = decision.targets[0].numbers["exact"]
    assert numbers["ci_low"] >= 0.9 and numbers["ci_level"] == 0.95  # type: ignore[operator]
    assert numbers["ci_method"] == "clopper-pearson"
    assert "lower bound" in decision.reasons[0]


@pytest.mark.doc(
    "docs/spec.md",
    "`failed` only when its upper bound is below it",
)
def test_confident_fail_needs_the_upper_bound_below_the_minimum() -> None:
    decision = decide(CONFIDENT, metrics_of(800, 200), ["exact"])
    assert decision.status == "failed"
    assert "upper bound" in decision.reasons[0]


@pytest.mark.doc(
    "docs/spec.md",
    "otherwise `inconclusive` (the evidence cannot tell).",
    "3. without `confidence` (the core rule): pass rate (passed ÷ *planned* trials) below "
    "the minimum → `failed`, otherwise `passed`;",
)
def test_point_rate_above_but_interval_straddling_is_inconclusive() -> None:
    # 95/100 beats 0.9 as a point rate, but the exact [0.887, 0.984] does not clear it
    decision = decide(CONFIDENT, metrics_of(95, 5), ["exact"])
    assert decision.status == "inconclusive"
    assert decide(GatePolicy(minimum=0.9), metrics_of(95, 5), ["exact"]).status == "passed"


@pytest.mark.doc(
    "docs/spec.md",
    "For each target, in this order:",
    "(evidence always comes first)",
)
def test_bad_evidence_is_inconclusive_before_any_statistics() -> None:
    decision = decide(CONFIDENT, metrics_of(999, 0, other="unscorable"), ["exact"])
    assert decision.status == "inconclusive"
    assert any("unscorable" in r for r in decision.reasons)


@pytest.mark.doc(
    "docs/spec.md",
    "For each target, in this order:",
    "2. with `min_effect`: fewer planned *samples* than the n the gate needs both to pass a "
    "target at the minimum + `min_effect` and to fail one at the minimum − `min_effect` (from "
    "0.5 without a minimum), each with probability `power`, by its own exact test at "
    "`confidence` (the larger n of the two sides; a side beyond 0 or 1 is skipped) → "
    "`inconclusive`; the reason says how many samples are needed.",
)
def test_min_samples_says_what_n_is_needed() -> None:
    policy = GatePolicy(minimum=0.9, min_effect=0.05, power=0.8)
    decision = decide(policy, metrics_of(50, 0), ["exact"])
    assert decision.status == "inconclusive"
    needed = decision.targets[0].numbers["exact"]["n_needed"]
    # the textbook one-sided n (about 280) cannot fail a target at 0.85 with power 0.8
    assert isinstance(needed, int) and 330 < needed < 400
    assert f"plan at least {needed}" in decision.reasons[0]
    assert "either way" in decision.reasons[0]
    assert decide(policy, metrics_of(needed - 1, 0), ["exact"]).status == "inconclusive"
    assert decide(policy, metrics_of(needed, 0), ["exact"]).status == "passed"


def _exact_power(n: int, minimum: float, rate: float, confidence: float) -> float:
    """The chance that exact Clopper–Pearson bounds (scipy's beta quantiles: an
    implementation independent of assay's) decide a target at *rate* the right way."""
    tail = (1 - confidence) / 2
    k = np.arange(n + 1)
    low = np.where(k == 0, 0.0, stats.beta.ppf(tail, np.maximum(k, 1), n - k + 1))
    high = np.where(k == n, 1.0, stats.beta.ppf(1 - tail, k + 1, np.maximum(n - k, 1)))
    right = low >= minimum if rate > minimum else high < minimum
    return float(stats.binom.pmf(k, n, rate)[right].sum())


@pytest.mark.parametrize(
    "gate",
    [
        {"min_effect": 0.1},  # no minimum: from 0.5
        {"min_effect": 0.1, "power": 0.9},
        {"min_effect": 0.1, "confidence": 0.99},
        {"minimum": 0.7, "min_effect": 0.05, "power": 0.8},
        {"minimum": 0.9, "min_effect": 0.05, "power": 0.8},
        {"minimum": 0.95, "min_effect": 0.03, "power": 0.9},
        {"minimum": 0.99, "min_effect": 0.01, "power": 0.8},
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "2. with `min_effect`: fewer planned *samples* than the n the gate needs both to pass a "
    "target at the minimum + `min_effect` and to fail one at the minimum − `min_effect` (from "
    "0.5 without a minimum), each with probability `power`, by its own exact test at "
    "`confidence` (the larger n of the two sides; a side beyond 0 or 1 is skipped) → "
    "`inconclusive`; the reason says how many samples are needed.",
)
def test_the_n_needed_gives_the_power_both_ways(gate: dict[str, float]) -> None:
    policy = GatePolicy(**gate)
    minimum, effect = gate.get("minimum", 0.5), gate["min_effect"]
    decision = decide(policy, metrics_of(10, 0), ["exact"])
    needed = decision.targets[0].numbers["exact"]["n_needed"]
    assert isinstance(needed, int) and decision.status == "inconclusive"
    assert f"plan at least {needed} samples" in decision.reasons[0]
    sides = [r for r in (minimum + effect, minimum - effect) if 0 <= r <= 1]
    level = policy.confidence_level
    for n in (needed, needed + 1, needed + needed // 40):
        for rate in sides:
            assert _exact_power(n, minimum, rate, level) >= policy.power_level, (n, rate)
    # and it is not oversized: 10% fewer samples fall short on some side
    fewer = int(needed * 0.9)
    assert min(_exact_power(fewer, minimum, r, level) for r in sides) < policy.power_level
    if "minimum" in gate:
        assert decide(policy, metrics_of(needed, 0), ["exact"]).status == "passed"


@pytest.mark.doc(
    "docs/spec.md",
    "A target without a minimum is reported, not gated (unless `min_effect` or "
    "`no_regression` is declared).",
)
def test_min_samples_alone_gates_without_a_minimum() -> None:
    decision = decide(GatePolicy(min_effect=0.1), metrics_of(10, 0), ["exact"])
    assert decision.status == "inconclusive" and decision.targets[0].gated


@pytest.mark.doc(
    "docs/spec.md",
    "when not declared they are left out of `spec.json`, so older specs keep their digests.",
)
def test_new_fields_stay_out_of_old_specs_canonical_json(tmp_path: Path) -> None:
    assert b"confidence" not in msgspec.json.encode(GatePolicy(minimum=0.9))
    assert b'"confidence":0.95' in msgspec.json.encode(CONFIDENT)
    old = load_spec(simple_spec(tmp_path / "old", gate={"minimum": 0.9})).spec.canonical()
    assert msgspec.json.decode(old)["gate"] == {"minimum": 0.9, "scorer": None, "targets": {}}
    declared = {"minimum": 0.9, "power": 0.8, "min_effect": 0.1}
    new = load_spec(simple_spec(tmp_path / "new", gate=declared)).spec.canonical()
    assert b'"min_effect":0.1' in new and b'"power":0.8' in new


@pytest.mark.parametrize(
    "gate",
    [
        {"minimum": 0.9, "confidence": 1.0},
        {"minimum": 0.9, "confidence": 0},
        {"min_effect": 1.5},
        {"min_effect": 0},
        {"min_effect": 1.0},
        {"min_effect": 0.1, "power": 1.0},
        {"min_effect": 0.1, "power": 0},
        {"power": 0.8},
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "`confidence`, `min_effect` and `power` lie strictly between 0 and 1",
)
def test_spec_refuses_out_of_range_policies(tmp_path: Path, gate: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        load_spec(simple_spec(tmp_path, gate=gate))


def test_spec_loads_a_confident_gate(tmp_path: Path) -> None:
    gate = {"minimum": 0.9, "confidence": 0.99, "min_effect": 0.05, "power": 0.9}
    spec = load_spec(simple_spec(tmp_path, gate=gate)).spec
    assert spec.gate.confidence_level == 0.99 and spec.gate.power_level == 0.9


@pytest.mark.doc(
    "docs/spec.md",
    "Samples, not trials: the repetitions of one sample share its difficulty, so 100 samples "
    "× 3 repetitions count as 100",
)
def test_min_samples_counts_samples_not_repeated_trials() -> None:
    # 100 samples × 3 repetitions: 300 trials, but only 100 independent samples
    builder = MetricsBuilder({"a": 300}, ["exact"], repetitions=3)
    for i in range(300):
        builder.add_trial("a", "completed")
        builder.add_score("a", "exact", "passed", sample_id=f"s{i // 3}")
    policy = GatePolicy(minimum=0.9, min_effect=0.05, power=0.8)
    decision = decide(policy, builder.build(), ["exact"])
    numbers = decision.targets[0].numbers["exact"]
    assert numbers["n_samples"] == 100 and numbers["denominator"] == 300
    assert decision.status == "inconclusive"  # 300 trials would have been enough
    assert "100 planned sample(s) (300 trials" in decision.reasons[0]
    assert f"plan at least {numbers['n_needed']} samples" in decision.reasons[0]
