"""Invariant 8: the gate applies the spec's policy, and says inconclusive, never passed,
when any evidence is blocked, invalid, unscorable, unrun or judged by a crashed scorer."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.gate import NOT_GATED, decide
from assay.score import Metrics, MetricsBuilder
from assay.spec import GatePolicy
from tests.helpers import FAST_RETRY, run_spec_at, unique_callable_spec


def metrics_of(trials: dict[str, list[tuple[str, str]]], planned: int | None = None) -> Metrics:
    """Metrics for targets whose trials are ``(state, score status)`` pairs (one scorer)."""
    builder = MetricsBuilder(
        {t: planned if planned is not None else len(rows) for t, rows in trials.items()},
        ["exact"],
    )
    for target, rows in trials.items():
        for state, status in rows:
            builder.add_trial(target, state)
            builder.add_score(target, "exact", status)
    return builder.build()


PASS = ("completed", "passed")
FAIL = ("completed", "failed")


@pytest.mark.doc(
    "docs/spec.md",
    "3. without `confidence` (the core rule): pass rate (passed ÷ *planned* trials) below "
    "the minimum → `failed`, otherwise `passed`;",
)
def test_all_passed_meets_the_minimum() -> None:
    decision = decide(GatePolicy(minimum=1.0), metrics_of({"a": [PASS] * 3}), ["exact"])
    assert decision.status == "passed"


@pytest.mark.doc(
    "docs/spec.md",
    "3. without `confidence` (the core rule): pass rate (passed ÷ *planned* trials) below "
    "the minimum → `failed`, otherwise `passed`;",
)
def test_below_the_minimum_fails_with_the_numbers() -> None:
    decision = decide(GatePolicy(minimum=1.0), metrics_of({"a": [PASS, PASS, FAIL]}), ["exact"])
    assert decision.status == "failed"
    assert any("2/3" in reason for reason in decision.reasons)


@pytest.mark.doc(
    "docs/spec.md",
    "below the minimum → `failed`, otherwise `passed`;",
)
def test_a_rate_equal_to_the_minimum_passes() -> None:
    """Only a rate *below* the minimum fails: 1 of 2 meets 0.5, 1 of 3 does not."""
    assert decide(GatePolicy(minimum=0.5), metrics_of({"a": [PASS, FAIL]}), ["exact"]).status == (
        "passed"
    )
    below = decide(GatePolicy(minimum=0.5), metrics_of({"a": [PASS, FAIL, FAIL]}), ["exact"])
    assert below.status == "failed"
    assert below.targets[0].numbers["exact"]["denominator"] == 3


@pytest.mark.parametrize(
    ("bad", "word"),
    [
        (("blocked", "unscorable"), "blocked"),
        (("invalid", "unscorable"), "invalid"),
        (("completed", "unscorable"), "unscorable"),
        (("completed", "error"), "error"),
    ],
    ids=["blocked", "invalid", "unscorable", "scorer-error"],
)
@pytest.mark.doc(
    "docs/spec.md",
    "1. any blocked, invalid or unrun trial, or any unscorable or errored score → "
    "`inconclusive`, with the counts as reasons (evidence always comes first);",
)
def test_doubtful_evidence_is_inconclusive_even_above_the_minimum(
    bad: tuple[str, str], word: str
) -> None:
    # 9 of 10 passed clears a 0.5 minimum, but one trial cannot be stood on
    metrics = metrics_of({"a": [PASS] * 9 + [bad]})
    decision = decide(GatePolicy(minimum=0.5), metrics, ["exact"])
    assert decision.status == "inconclusive"
    assert any(word in reason for reason in decision.reasons), decision.reasons


@pytest.mark.doc(
    "docs/spec.md",
    "1. any blocked, invalid or unrun trial",
)
def test_unrun_trials_are_inconclusive() -> None:
    metrics = metrics_of({"a": [PASS] * 3}, planned=4)
    decision = decide(GatePolicy(minimum=0.5), metrics, ["exact"])
    assert decision.status == "inconclusive"
    assert decision.reasons


@pytest.mark.doc(
    "docs/spec.md",
    "The run's decision is the worst over its gated targets (inconclusive, then failed).",
)
def test_inconclusive_outranks_failed() -> None:
    metrics = metrics_of({"a": [FAIL] * 3, "b": [PASS, PASS, ("blocked", "unscorable")]})
    decision = decide(GatePolicy(minimum=1.0), metrics, ["exact"])
    assert {t.target_id: t.status for t in decision.targets} == {
        "a": "failed",
        "b": "inconclusive",
    }
    assert decision.status == "inconclusive"


@pytest.mark.doc(
    "docs/spec.md",
    "A target without a minimum is reported, not gated",
    "The run's decision is the worst over its gated targets",
)
def test_per_target_minimums_and_ungated_targets() -> None:
    metrics = metrics_of({"a": [PASS, FAIL], "b": [FAIL, FAIL]})
    decision = decide(GatePolicy(targets={"a": 0.5}), metrics, ["exact"])
    by_target = {t.target_id: t for t in decision.targets}
    assert by_target["a"].status == "passed" and by_target["a"].gated
    assert not by_target["b"].gated  # no minimum: reported, not gated
    assert by_target["b"].status == "ungated"  # 0/2, and still not "failed" nor "passed"
    assert decision.status == "passed"


@pytest.mark.parametrize("rows", [[PASS] * 3, [FAIL] * 3], ids=["all-right", "all-wrong"])
@pytest.mark.doc(
    "docs/spec.md",
    "A run in which no target is gated is `ungated`",
    "Its status is `ungated`, never `passed`",
)
def test_no_rule_is_ungated_whatever_the_rate(rows: list[tuple[str, str]]) -> None:
    decision = decide(GatePolicy(), metrics_of({"a": rows, "b": rows}), ["exact"])
    assert decision.status == "ungated"
    assert [(t.status, t.gated) for t in decision.targets] == [("ungated", False)] * 2
    assert decision.reasons == [NOT_GATED]
    assert NOT_GATED == "not gated: no minimum, min_effect or no_regression declared"


@pytest.mark.parametrize(
    ("bad", "word"),
    [
        (("blocked", "unscorable"), "blocked"),
        (("invalid", "unscorable"), "invalid"),
        (None, "not run"),
        (("completed", "unscorable"), "unscorable"),
        (("completed", "error"), "scorer errors"),
    ],
    ids=["blocked", "invalid", "not-run", "unscorable", "scorer-error"],
)
@pytest.mark.doc(
    "docs/spec.md",
    "Evidence comes first on every target: an ungated target that rule 1 makes "
    "`inconclusive` makes the run `inconclusive` too,",
    "unless rule 1 makes it `inconclusive`.",
)
def test_an_ungated_target_with_doubtful_evidence_makes_the_run_inconclusive(
    bad: tuple[str, str] | None, word: str
) -> None:
    rows = [PASS, PASS] + ([bad] if bad is not None else [])
    doubtful = metrics_of({"a": [PASS] * 3, "b": rows}, planned=3)
    for policy in (GatePolicy(), GatePolicy(targets={"a": 1.0})):  # nothing gated, or "a" only
        decision = decide(policy, doubtful, ["exact"])
        by_target = {t.target_id: t for t in decision.targets}
        assert (by_target["b"].status, by_target["b"].gated) == ("inconclusive", False)
        assert decision.status == "inconclusive"
        assert any(r.startswith("b: ") and word in r for r in decision.reasons), decision.reasons


@pytest.mark.doc(
    "docs/spec.md",
    "1. any blocked, invalid or unrun trial",
)
def test_a_blocked_trial_makes_a_real_run_inconclusive(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(10)]
    source = """
def answer(text):
    if text == "q9":
        raise ConnectionError("refused")
    return text
"""
    spec = unique_callable_spec(
        tmp_path / "spec", source, samples=samples, retry=FAST_RETRY, gate={"minimum": 0.5}
    )
    outcome = run_spec_at(spec, tmp_path / "run")
    assert outcome.metrics.estimate("t", "exact").value == 0.9
    assert outcome.gate.status == "inconclusive"
