"""Invariants 6 and 7: scorers judge the observation; metrics divide by the plan."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from assay.score import (
    MetricsBuilder,
    Observation,
    Verdict,
    score_observation,
)
from assay.score import (
    check_exact as exact,
)
from assay.score import (
    check_includes as includes,
)
from tests.helpers import FAST_RETRY, read_jsonl, run_spec_at, unique_callable_spec

SAMPLES = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(4)]


@pytest.mark.doc(
    "docs/spec.md",
    "A product failure is `failed`; a trial with no product result (blocked) is `unscorable`",
    "3. without `confidence` (the core rule): pass rate (passed ÷ *planned* trials)",
)
def test_denominator_is_the_plan_and_blocked_trials_count(tmp_path: Path) -> None:
    source = """
def answer(text):
    if text == "q1":
        raise ConnectionError("down")
    if text == "q2":
        raise ValueError("crashed")
    return text
"""
    spec = unique_callable_spec(
        tmp_path / "spec", source, samples=SAMPLES, repetitions=2, retry=FAST_RETRY
    )
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    estimate = outcome.metrics.estimate("t", "exact")
    assert estimate.denominator == 8  # 4 samples × 2 repetitions, from the plan
    assert estimate.passed == 4
    assert estimate.value == pytest.approx(4 / 8)  # not 4 / 6: blocked trials still count
    assert estimate.statuses == {
        "passed": 4,
        "failed": 2,
        "unscorable": 2,
        "error": 0,
        "missing": 0,
    }
    assert outcome.metrics.counts("t").states["blocked"] == 2
    assert outcome.metrics.counts("t").planned == 8
    report = json.loads((out / "report.json").read_text())
    (row,) = report["metrics"]["estimates"]
    assert (row["passed"], row["denominator"], row["value"]) == (4, 8, 0.5)
    assert outcome.gate.status == "inconclusive"


def test_metrics_builder_counts_unrun_trials_as_missing() -> None:
    builder = MetricsBuilder({"a": 4, "b": 2}, ["exact"])
    builder.add_trial("a", "completed")
    builder.add_score("a", "exact", "passed")
    builder.add_trial("a", "completed")
    builder.add_score("a", "exact", "passed")
    for _ in range(2):
        builder.add_trial("b", "completed")
        builder.add_score("b", "exact", "passed")
    metrics = builder.build()
    a = metrics.estimate("a", "exact")
    assert (a.value, a.n, a.denominator, a.statuses["missing"]) == (0.5, 2, 4, 2)
    assert a.stderr == pytest.approx((0.5 * 0.5 / 4) ** 0.5)
    assert metrics.counts("a").states["not_run"] == 2
    assert metrics.estimate("b", "exact").value == 1.0


@pytest.mark.doc(
    "docs/spec.md",
    "as is a sample that lacks what the scorer needs.",
)
def test_a_group_pattern_without_expected_is_unscorable_and_inconclusive(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"fee {i}", "expected": None} for i in range(3)]
    scorers = [{"id": "fee", "type": "regex", "pattern": r"fee (\d+)"}]
    spec = unique_callable_spec(
        tmp_path / "spec", "def answer(text):\n    return text\n", samples=samples, scorers=scorers
    )
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    assert {s["status"] for s in read_jsonl(out / "scores.jsonl")} == {"unscorable"}
    assert outcome.metrics.estimate("t", "fee").statuses["unscorable"] == 3
    assert outcome.gate.status == "inconclusive"
    assert any("unscorable" in reason for reason in outcome.gate.reasons)


def test_a_scorer_sees_the_output_not_the_targets_opinion(tmp_path: Path) -> None:
    samples = [{"id": "s0", "input": 100, "expected": {"fee": 0}}]
    source = "def answer(amount):\n    return {'fee': 10, 'passed': True, 'status': 'passed'}\n"
    scorers = [{"id": "fee", "type": "field_match", "field": "fee"}]
    spec = unique_callable_spec(tmp_path / "spec", source, samples=samples, scorers=scorers)
    outcome = run_spec_at(spec, tmp_path / "run")
    assert outcome.metrics.estimate("t", "fee").statuses["failed"] == 1
    assert outcome.gate.status == "failed"


@pytest.mark.doc(
    "docs/spec.md",
    "A scorer that crashes is recorded as `error`.",
)
def test_a_crashing_scorer_is_recorded_as_error() -> None:
    def broken(observation: Observation) -> Verdict:
        raise ZeroDivisionError("division by zero")

    verdict = anyio.run(score_observation, broken, Observation("x", "answered", "x"))
    assert verdict.status == "error"
    assert verdict.value is None
    assert "ZeroDivisionError" in verdict.reason


def test_exact_reads_completions_like_includes_does() -> None:
    observation = Observation("q0", "answered", ["q0"])
    assert includes()(observation).status == "passed"
    assert exact()(observation).status == "passed"
