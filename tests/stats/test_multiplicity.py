"""Multiplicity: Holm over every interval-based check of a run keeps the family-wise
error at most α; ``multiplicity: none`` opts out; one check is judged as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from assay.errors import ConfigError
from assay.gate import RegressionCheck, decide
from assay.gate._multiplicity import adjust_for_multiplicity, holm
from assay.score import MetricEstimate, Metrics, TargetCounts
from assay.spec import GatePolicy, load_spec
from tests.helpers import simple_spec

TARGETS, SCORERS, N, MINIMUM = 10, 3, 100, 0.9
SCORER_IDS = [f"s{j}" for j in range(SCORERS)]


def metrics_of(passes: list[list[int]], n: int = N) -> Metrics:
    """One estimate per target × scorer with *passes[t][s]* of *n* passed."""
    estimates, counts = [], []
    for t, row in enumerate(passes):
        for s, k in zip(SCORER_IDS, row, strict=False):
            statuses = {"passed": k, "failed": n - k, "unscorable": 0, "error": 0, "missing": 0}
            estimates.append(MetricEstimate(f"t{t}", s, k / n, k, n, n, 0.0, statuses, samples=n))
        states = {"completed": n, "blocked": 0, "invalid": 0, "not_run": 0}
        counts.append(TargetCounts(f"t{t}", n, states))
    return Metrics(estimates, counts)


def _failed(reason: str) -> bool:
    """Whether a check's reason says ``failed`` (and the adjustment kept it)."""
    return "upper bound is below the minimum" in reason and "Holm" not in reason


def wrong_verdicts(policy: GatePolicy, runs: int, seed: int) -> float:
    """How often a run of 10 targets × 3 scorers, every one exactly at the minimum, has
    some check ``failed`` (each check's counts independent: the hardest case for Holm)."""
    rng = np.random.default_rng(seed)
    passes = rng.binomial(N, MINIMUM, size=(runs, TARGETS, SCORERS))
    wrong = 0
    for run in passes.tolist():
        decision = decide(policy, metrics_of(run), SCORER_IDS)
        wrong += any(_failed(reason) for t in decision.targets for reason in t.reasons)
    return wrong / runs


@pytest.mark.doc(
    "docs/spec.md",
    "so the chance that any check of the run is wrong stays at most 1 − confidence.",
    "judged each on its own, 30 checks all exactly at their minimum (n = 100) get at least "
    "one wrong in about half of the runs.",
    "`multiplicity: none` judges each check on its own.",
)
def test_holm_keeps_the_family_wise_error_of_thirty_checks_at_alpha() -> None:
    holm_policy = GatePolicy(minimum=MINIMUM, confidence=0.95)
    assert wrong_verdicts(holm_policy, 800, seed=1) <= 0.05 + 0.01
    alone = GatePolicy(minimum=MINIMUM, confidence=0.95, multiplicity="none")
    assert wrong_verdicts(alone, 300, seed=2) > 0.35  # 47%: 19 times the promise


def test_holm_adjusted_p_values_are_the_textbook_ones() -> None:
    # Holm (1979): sorted p times (m - rank), made monotone, capped at 1
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5]
    assert holm([0.02, 0.9]) == pytest.approx([0.04, 0.9])


@pytest.mark.parametrize("passed", range(80, 101))
@pytest.mark.doc(
    "docs/spec.md",
    "A run with a single such check is judged exactly as without the adjustment.",
)
def test_a_single_check_is_judged_as_without_the_adjustment(passed: int) -> None:
    metrics = metrics_of([[passed]])
    holm_decision = decide(GatePolicy(minimum=MINIMUM, confidence=0.95), metrics, ["s0"])
    alone = GatePolicy(minimum=MINIMUM, confidence=0.95, multiplicity="none")
    plain = decide(alone, metrics, ["s0"])
    assert holm_decision.status == plain.status
    assert holm_decision.reasons == plain.reasons
    numbers = holm_decision.targets[0].numbers["s0"]
    assert numbers["p_adjusted"] == numbers["p_value"] and numbers["multiplicity"] == "holm"


@pytest.mark.doc(
    "docs/spec.md",
    "a check keeps its `passed` or `failed` only when its Holm-adjusted p-value is at most "
    "1 − its confidence",
    "A check the adjustment does not confirm is `inconclusive`, and its reason names the "
    "adjusted p-value and the level it had to meet.",
    "with `confidence` also `p_pass` and `p_fail` (one-sided p-values at the minimum), for an "
    "adjusted check `p_value`, `p_adjusted`, `alpha_adjusted`, `multiplicity` and "
    "`family_size`",
)
def test_a_check_holm_does_not_confirm_is_inconclusive_with_its_level() -> None:
    # 97/100 clears 0.9 on its own (p ≈ 0.01) but not as one of 30 checks
    passes = [[97, 90, 90]] + [[90, 90, 90]] * (TARGETS - 1)
    policy = GatePolicy(minimum=MINIMUM, confidence=0.95)
    decision = decide(policy, metrics_of(passes), SCORER_IDS)
    first = decision.targets[0]
    assert first.status == "inconclusive"
    (reason,) = [r for r in first.reasons if r.startswith("s0:")]
    assert "lower bound meets the minimum" in reason and "Holm" in reason
    numbers = first.numbers["s0"]
    assert isinstance(numbers["p_value"], float) and numbers["p_value"] <= 0.05
    assert isinstance(numbers["p_adjusted"], float) and numbers["p_adjusted"] > 0.05
    assert numbers["family_size"] == 30 and numbers["alpha_adjusted"] == pytest.approx(0.05 / 30)
    assert f"adjusted p = {numbers['p_adjusted']:.3g}" in reason
    assert numbers["multiplicity"] == "holm"
    p_pass, p_fail = numbers["p_pass"], numbers["p_fail"]
    assert isinstance(p_pass, float) and isinstance(p_fail, float)
    assert numbers["p_value"] == pytest.approx(2 * p_pass) and p_fail > 0.5
    alone = GatePolicy(minimum=MINIMUM, confidence=0.95, multiplicity="none")
    alone_first = decide(alone, metrics_of(passes), SCORER_IDS).targets[0]
    (plain,) = [r for r in alone_first.reasons if r.startswith("s0:")]
    assert plain.endswith("lower bound meets the minimum 0.9")
    # strong evidence survives the adjustment
    strong = [[100, 90, 90]] + [[90, 90, 90]] * (TARGETS - 1)
    strong_first = decide(policy, metrics_of(strong), SCORER_IDS).targets[0]
    (kept,) = [r for r in strong_first.reasons if r.startswith("s0:")]
    assert kept.endswith("lower bound meets the minimum 0.9")


@pytest.mark.doc(
    "docs/spec.md",
    "Checks stopped before any test (doubtful evidence, a plan too small, no usable "
    "baseline) and minimums judged by the point rate (no `confidence`) are not adjusted.",
)
def test_untested_and_point_rate_checks_are_outside_the_family() -> None:
    point = decide(GatePolicy(minimum=MINIMUM), metrics_of([[97, 91, 90]] * TARGETS), SCORER_IDS)
    assert point.status == "passed"
    assert all("p_adjusted" not in n for t in point.targets for n in t.numbers.values())
    # a target with doubtful evidence is stopped before any test: not in the family
    metrics = metrics_of([[100], [100]])
    blocked = msgspec.structs.replace(
        metrics.targets[0], states={"completed": N - 1, "blocked": 1, "invalid": 0, "not_run": 0}
    )
    metrics = msgspec.structs.replace(metrics, targets=[blocked, metrics.targets[1]])
    decision = decide(GatePolicy(minimum=MINIMUM, confidence=0.95), metrics, ["s0"])
    assert decision.targets[0].status == "inconclusive"
    assert decision.targets[1].numbers["s0"]["family_size"] == 1


def _with_regression(policy: GatePolicy, check: RegressionCheck) -> Any:
    """The adjustment of one target whose minimum (100/100) and regression check (as the
    regression module reports it) were both judged."""
    decision = decide(GatePolicy(minimum=MINIMUM, confidence=0.95), metrics_of([[100]]), ["s0"])
    (target,) = decision.targets
    raw = [r for r in target.reasons if r.startswith("s0: pass rate")]
    judged = msgspec.structs.replace(
        target, reasons=[*raw, check.reason], regression=[check], numbers={
            k: {m: v for m, v in n.items() if m in ("passed", "denominator", "p_pass", "p_fail")}
            for k, n in target.numbers.items()
        },
    )  # fmt: skip
    return adjust_for_multiplicity(policy, [judged])[0]


@pytest.mark.doc(
    "docs/spec.md",
    "Every check judged by an interval — each target × scorer minimum with `confidence`, and "
    "each `no_regression` check — may err with probability up to 1 − confidence;",
)
def test_no_regression_checks_join_the_family() -> None:
    policy = GatePolicy(minimum=MINIMUM, confidence=0.95)
    passed = RegressionCheck("s0", "t", "passed", "s0: no regression", 0.05, p_pass=0.02)
    target = _with_regression(policy, passed)
    # 100/100 (p ≈ 5e-5) and the regression check (p = 0.04): Holm confirms both
    assert target.status == "passed"
    numbers = target.numbers["s0"]
    assert numbers["family_size"] == 2 and numbers["regression_p_value"] == pytest.approx(0.04)
    weak = msgspec.structs.replace(passed, p_pass=0.024)  # p = 0.048: ≤ 0.05 / 1 at rank 2
    assert _with_regression(policy, weak).status == "passed"
    weaker = msgspec.structs.replace(passed, p_pass=0.026)  # p = 0.052: not even alone
    outcome = _with_regression(policy, weaker)
    assert outcome.status == "inconclusive"
    (check,) = outcome.regression
    assert check.status == "inconclusive" and "Holm" in check.reason
    untested = RegressionCheck("s0", "t", "inconclusive", "s0: no regression check", 0.05)
    assert _with_regression(policy, untested).numbers["s0"]["family_size"] == 1


@pytest.mark.doc(
    "docs/spec.md",
    "`multiplicity` is `holm` or `none`; when not declared they are left out of `spec.json`, "
    "so older specs keep their digests.",
)
def test_multiplicity_is_frozen_into_the_spec_only_when_declared(tmp_path: Path) -> None:
    old = load_spec(simple_spec(tmp_path / "old", gate={"minimum": 0.9})).spec.canonical()
    assert b"multiplicity" not in old
    declared = {"minimum": 0.9, "confidence": 0.95, "multiplicity": "none"}
    new = load_spec(simple_spec(tmp_path / "new", gate=declared)).spec
    assert b'"multiplicity":"none"' in new.canonical()
    assert new.gate.multiplicity_method == "none"
    with pytest.raises(ConfigError, match=r"gate\.multiplicity"):
        load_spec(simple_spec(tmp_path / "bad", gate={"minimum": 0.9, "multiplicity": "bonf"}))
