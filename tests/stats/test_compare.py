"""Paired comparisons: exact McNemar on discordant pairs, within a run and across two."""

from __future__ import annotations

import functools
import json
import math
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from statistics import NormalDist
from typing import Any

import msgspec
import pytest

from assay.compare import (
    MAX_FLIPPED,
    compare_runs,
    compare_targets,
    holm_adjusted,
    mcnemar_p,
    paired_interval,
)
from tests.helpers import error_line, run_cli, run_spec_at, simple_spec, write_module


def record(target: str, sample: str, status: str, rep: int = 1) -> dict[str, Any]:
    return {"target_id": target, "sample_id": sample, "repetition": rep,
            "scorer_id": "exact", "status": status}  # fmt: skip


@pytest.mark.doc(
    "docs/spec.md",
    "exact McNemar on the discordant pairs",
)
def test_mcnemar_is_the_exact_binomial_on_discordant_pairs() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(0, 6) == pytest.approx(2 * 0.5**6)
    assert mcnemar_p(3, 3) == 1.0
    assert mcnemar_p(10, 1) == mcnemar_p(1, 10)


def test_paired_interval_has_width_even_without_discordance() -> None:
    low, high = paired_interval(0, 0, 50)
    assert low < 0 < high


def _restricted_mle_statistic(a_only: float, b_only: float, n: int, d: float) -> float:
    """Tango's score statistic with the restricted MLE found numerically (scipy), not by
    the closed form under test: maximise the trinomial likelihood of (A only, B only,
    concordant) over P(A only) = q with P(B only) = q + d."""
    from scipy.optimize import minimize_scalar  # type: ignore[import-untyped]

    def minus_log_likelihood(q: float) -> float:
        cells = [(a_only, q), (b_only, q + d), (n - a_only - b_only, 1 - 2 * q - d)]
        return -sum(k * math.log(p) for k, p in cells if k > 0)

    low, high = max(0.0, -d), (1.0 - d) / 2.0
    q = minimize_scalar(minus_log_likelihood, bounds=(low, high), method="bounded",
                        options={"xatol": 1e-13}).x  # fmt: skip
    return (b_only - a_only - n * d) / math.sqrt(n * (2 * q + d * (1 - d)))


@pytest.mark.parametrize(
    ("a_only", "b_only", "pairs"), [(0, 0, 50), (5, 2, 20), (36, 1, 100), (3, 0, 200)]
)
@pytest.mark.doc(
    "docs/spec.md",
    "with Tango's score interval of the difference of pass rates",
)
def test_paired_interval_is_tangos_score_interval(a_only: int, b_only: int, pairs: int) -> None:
    """Tango (1998): the differences d the score test (variance at the restricted MLE
    under d) does not reject at 1.96; each bound is where the statistic crosses ±1.96."""
    from scipy.optimize import brentq  # type: ignore[import-untyped]

    z = NormalDist().inv_cdf(0.975)
    observed = (b_only - a_only) / pairs
    stat = functools.partial(_restricted_mle_statistic, a_only, b_only, pairs)
    expected_low = brentq(lambda d: stat(d) - z, -1 + 1e-9, observed)
    expected_high = brentq(lambda d: stat(d) + z, observed, 1 - 1e-9)
    low, high = paired_interval(a_only, b_only, pairs, 0.95)
    assert low == pytest.approx(expected_low, abs=1e-6)
    assert high == pytest.approx(expected_high, abs=1e-6)


@pytest.mark.doc(
    "docs/spec.md",
    "with no discordant pair among n its lower bound is −z²/(n + z²)",
)
def test_no_discordant_pair_bounds_the_difference_by_z_squared_over_n() -> None:
    z = NormalDist().inv_cdf(0.975)
    for n in (50, 100, 1000):
        low, high = paired_interval(0, 0, n)
        assert low == pytest.approx(-z * z / (n + z * z), abs=1e-9) and high == -low
    # 100 identical pairs cannot show a margin of 0.02 (Agresti–Min said ±0.0192)
    assert paired_interval(0, 0, 100)[0] < -0.036


def test_compare_targets_counts_and_lists_flips() -> None:
    rows = []
    for i in range(20):
        a = "passed" if i < 15 else "failed"
        b = "passed" if i < 10 or i >= 18 else "failed"
        rows += [record("a", f"s{i:02}", a), record("b", f"s{i:02}", b)]
    [c] = compare_targets(rows, ["a", "b"], ["exact"])
    assert (c.pairs, c.a_passed, c.b_passed) == (20, 15, 12)
    assert (c.a_only, c.b_only) == (5, 2)
    assert c.difference == pytest.approx(-0.15)
    assert c.ci_low < c.difference < c.ci_high
    assert c.p_value == pytest.approx(mcnemar_p(5, 2))
    assert [f.sample_id for f in c.flipped] == [f"s{i}" for i in (10, 11, 12, 13, 14, 18, 19)]


def test_a_side_that_never_scored_a_pair_counts_as_missing() -> None:
    rows = [record("a", "s1", "passed"), record("b", "s1", "passed"), record("a", "s2", "passed")]
    [c] = compare_targets(rows, ["a", "b"], ["exact"])
    assert (c.pairs, c.a_only) == (2, 1)
    assert c.flipped[0].b == "missing"


def test_flipped_list_is_capped() -> None:
    rows = [r for i in range(200) for r in (record("a", f"s{i:03}", "passed"),
                                             record("b", f"s{i:03}", "failed"))]  # fmt: skip
    [c] = compare_targets(rows, ["a", "b"], ["exact"])
    assert len(c.flipped) == MAX_FLIPPED and c.flipped_omitted == 200 - MAX_FLIPPED


def test_one_target_has_nothing_to_compare() -> None:
    assert compare_targets([record("a", "s", "passed")], ["a"], ["exact"]) == []


TARGETS = """
def right(text):
    return text

def half(text):
    return text if int(text[1:]) % 2 else "no"
"""


def _spec(folder: Path, function: str, name: str = "t") -> Path:
    write_module(folder, "cmp_targets_" + folder.name.replace("-", "_"), TARGETS)
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(8)]
    module = "cmp_targets_" + folder.name.replace("-", "_")
    targets = [{"id": name, "callable": f"{module}:{function}"}]
    return simple_spec(folder, samples=samples, targets=targets)


@pytest.mark.doc(
    "docs/cli.md",
    "| `compare RUN_A RUN_B [--json] [--confidence L]` | verify both, then compare B against A "
    "paired by sample (see `docs/report.md`); exit 0 |",
)
def test_assay_compare_two_runs(tmp_path: Path) -> None:
    run_spec_at(_spec(tmp_path / "spec_a", "right"), tmp_path / "a")
    run_spec_at(_spec(tmp_path / "spec_b", "half"), tmp_path / "b")
    proc = run_cli("compare", tmp_path / "a", tmp_path / "b", "--json")
    assert proc.returncode == 0, proc.stderr
    [c] = json.loads(proc.stdout)
    assert (c["pairs"], c["a_only"], c["b_only"]) == (8, 4, 0)
    assert c["p_value"] == pytest.approx(0.125)
    assert sorted(f["sample_id"] for f in c["flipped"]) == ["s0", "s2", "s4", "s6"]
    assert c["p_adjusted"] == c["p_value"]  # a family of one
    text = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert text.returncode == 0 and "exact-mcnemar p = 0.125" in text.stdout
    assert "s4" in text.stdout


@pytest.mark.doc(
    "docs/cli.md",
    "verify both, then compare B against A paired by sample",
)
def test_assay_compare_refuses_tampered_evidence(tmp_path: Path) -> None:
    run_spec_at(_spec(tmp_path / "spec_a", "right"), tmp_path / "a")
    run_spec_at(_spec(tmp_path / "spec_b", "half"), tmp_path / "b")
    scores = tmp_path / "b" / "scores.jsonl"
    scores.write_text(scores.read_text().replace('"failed"', '"passed"'))
    proc = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert proc.returncode == 4


def scored(target: str, sample: str, value: float, rep: int = 1) -> dict[str, Any]:
    status = "passed" if value >= 1.0 else "failed"
    return {**record(target, sample, status, rep), "scorer_id": "f1", "value": value}


@pytest.mark.doc(
    "docs/spec.md",
    "Continuous scores (any value other than 0 and 1), or repetitions in either run: the "
    "mean score per sample",
)
def test_continuous_scores_add_a_score_interval_of_means_with_a_sign_test() -> None:
    rows = []
    for i in range(40):
        a = 0.5
        b = 0.7 if i < 30 else 0.4  # B higher on 30 samples, lower on 10
        rows += [scored("a", f"s{i:02}", a), scored("b", f"s{i:02}", b)]
    mcnemar, mean = compare_targets(rows, ["a", "b"], ["f1"])
    assert mcnemar.test == "exact-mcnemar" and mcnemar.measure == "pass_rate"
    assert (mean.measure, mean.test, mean.ci_method) == ("mean", "sign-test", "tango-score-means")
    assert (mean.pairs, mean.a_only, mean.b_only) == (40, 10, 30)
    assert (mean.a_mass, mean.b_mass) == (pytest.approx(10 * 0.1), pytest.approx(30 * 0.2))
    assert (mean.ci_low, mean.ci_high) == paired_interval(mean.a_mass, mean.b_mass, 40)
    assert mean.difference == pytest.approx((30 * 0.2 - 10 * 0.1) / 40)
    assert mean.ci_low < mean.difference < mean.ci_high
    assert mean.p_value == pytest.approx(mcnemar_p(10, 30))
    assert mean.flipped[0].a == "0.5" and mean.flipped[0].b == "0.7"


def test_repetitions_compare_per_sample_means() -> None:
    rows = []
    for i in range(10):
        for rep in (1, 2):
            rows += [record("a", f"s{i}", "passed", rep),
                     record("b", f"s{i}", "passed" if rep == 1 else "failed", rep)]  # fmt: skip
    mean, trials = compare_targets(rows, ["a", "b"], ["exact"], repetitions=2)
    assert (mean.pairs, mean.rate_a, mean.rate_b, mean.a_only) == (10, 1.0, 0.5, 10)
    assert (trials.measure, trials.pairs, trials.test) == ("pass_rate", 20, "clustered-mcnemar")


@pytest.mark.doc(
    "docs/spec.md",
    "assay pairs them by sample id (and repetition) and compares only what both runs have",
)
def test_compare_runs_pairs_only_what_both_runs_have() -> None:
    a = [scored("t", f"s{i}", 0.5) for i in range(12)]
    b = [scored("t", f"s{i}", 0.25) for i in range(2, 14)]
    mcnemar, mean = compare_runs(a, iter(b), [("t", "t")])
    assert (mean.pairs, mean.unpaired_a, mean.unpaired_b) == (10, 2, 2)
    assert (mean.only_in_a, mean.only_in_b) == (["s0", "s1"], ["s12", "s13"])
    assert mean.difference == pytest.approx(-0.25) and mean.a_only == 10
    assert (mcnemar.pairs, mcnemar.unpaired_a, mcnemar.unpaired_b) == (10, 2, 2)


def test_compare_runs_keeps_a_few_hundred_bytes_per_trial() -> None:
    # pass/fail scores: the pairing alone (the bootstrap's bounded batches aside)
    n = 20_000

    def run(status: str) -> Iterator[dict[str, Any]]:
        return (record("t", f"sample-{i:06}", status if i % 3 else "failed") for i in range(n))

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        [comparison] = compare_runs(run("passed"), run("failed"), [("t", "t")])
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert comparison.pairs == n and comparison.a_only == n - n // 3 - 1
    assert peak / n < 400, f"{peak / n:.0f} bytes per trial"


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 1), (3, 9), (50, 50), (120, 161), (7, 0)])
def test_mcnemar_p_equals_scipys_binomial_test(a_only: int, b_only: int) -> None:
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    expected = binomtest(b_only, a_only + b_only, 0.5).pvalue
    assert mcnemar_p(a_only, b_only) == pytest.approx(expected, rel=1e-12)


def test_comparisons_do_not_depend_on_the_order_records_arrive_in() -> None:
    # a resumed run writes its scores in another order: the report must not change
    rng = random.Random(5)
    rows = [scored(t, f"s{i:02}", round(rng.random(), 3), rep)
            for i in range(40) for t in ("a", "b") for rep in (1, 2, 3)]  # fmt: skip
    shuffled = rows[:]
    rng.shuffle(shuffled)
    within = msgspec.json.encode(compare_targets(rows, ["a", "b"], ["f1"], repetitions=3))
    assert (
        msgspec.json.encode(compare_targets(shuffled, ["a", "b"], ["f1"], repetitions=3)) == within
    )
    a = [r for r in rows if r["target_id"] == "a"]
    b = [{**r, "value": r["value"] / 2} for r in rows if r["target_id"] == "a"]
    across = msgspec.json.encode(compare_runs(a, b, [("a", "a")], repetitions=(3, 3)))
    rng.shuffle(a)
    rng.shuffle(b)
    assert msgspec.json.encode(compare_runs(a, b, [("a", "a")], repetitions=(3, 3))) == across


def test_the_flipped_list_is_the_same_in_any_arrival_order() -> None:
    rows = [r for i in range(120) for r in (record("a", f"s{i:03}", "passed"),
                                             record("b", f"s{i:03}", "failed"))]  # fmt: skip
    [in_order] = compare_targets(rows, ["a", "b"], ["exact"])
    random.Random(2).shuffle(rows)
    [shuffled] = compare_targets(rows, ["a", "b"], ["exact"])
    assert shuffled.flipped == in_order.flipped
    assert [f.sample_id for f in in_order.flipped] == [f"s{i:03}" for i in range(MAX_FLIPPED)]


def test_many_unpaired_samples_are_counted_and_a_few_named() -> None:
    a = [scored("t", f"a{i:03}", 0.5) for i in range(80)] + [scored("t", "both", 0.5)]
    b = [scored("t", f"b{i:03}", 0.5) for i in range(70)] + [scored("t", "both", 0.25)]
    _, mean = compare_runs(a, b, [("t", "t")])
    assert (mean.pairs, mean.unpaired_a, mean.unpaired_b) == (1, 80, 70)
    assert len(mean.only_in_a) == len(mean.only_in_b) == MAX_FLIPPED
    assert mean.only_in_b[0] == "b000"


def test_holm_adjusts_over_the_family() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone
    assert holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjusted([0.5, 0.9]) == [1.0, 1.0]
    assert holm_adjusted([]) == []


@pytest.mark.doc(
    "docs/cli.md",
    "every line gives the p-value and its Holm-adjusted value over the comparisons printed",
)
def test_comparisons_carry_holm_adjusted_p_values() -> None:
    rows = []
    for i in range(60):
        rows += [record("a", f"s{i:02}", "passed"),
                 record("b", f"s{i:02}", "failed" if i < 12 else "passed"),
                 record("c", f"s{i:02}", "failed" if i < 4 else "passed")]  # fmt: skip
    comparisons = compare_targets(rows, ["a", "b", "c"], ["exact"])
    assert [(c.a, c.b) for c in comparisons] == [("a", "b"), ("a", "c"), ("b", "c")]
    raw = [c.p_value for c in comparisons]
    assert [c.p_adjusted for c in comparisons] == holm_adjusted(raw)
    assert comparisons[0].p_adjusted == pytest.approx(3 * raw[0])  # the smallest: x3
    assert all(c.p_adjusted >= c.p_value for c in comparisons)


def _repeated_spec(folder: Path, function: str) -> Path:
    spec = _spec(folder, function)
    spec.write_text(spec.read_text() + "repetitions: 3\n")
    return spec


@pytest.mark.doc(
    "docs/cli.md",
    "With repetitions in either run it prints the comparison of per-sample means first "
    "(the sign test: the samples are the independent units), then the pass rates tested "
    "clustered by sample (`clustered-mcnemar`); every line gives the p-value and its "
    "Holm-adjusted value over the comparisons printed.",
)
def test_assay_compare_with_repetitions_leads_with_the_clustered_test(tmp_path: Path) -> None:
    run_spec_at(_repeated_spec(tmp_path / "spec_a", "right"), tmp_path / "a")
    run_spec_at(_repeated_spec(tmp_path / "spec_b", "half"), tmp_path / "b")
    proc = run_cli("compare", tmp_path / "a", tmp_path / "b", "--json")
    assert proc.returncode == 0, proc.stderr
    mean, trials = json.loads(proc.stdout)
    assert (mean["measure"], mean["test"], mean["pairs"]) == ("mean", "sign-test", 8)
    assert (trials["measure"], trials["test"], trials["pairs"]) == (
        "pass_rate", "clustered-mcnemar", 24
    )  # fmt: skip
    assert (mean["a_only"], trials["a_only"]) == (4, 12)  # 4 samples, 12 trials
    text = run_cli("compare", tmp_path / "a", tmp_path / "b")
    first = text.stdout.splitlines()[0]
    assert "8 samples, mean" in first and "sign test p = 0.125" in first, text.stdout
    lines = [line for line in text.stdout.splitlines() if line.startswith("A:t vs B:t")]
    assert len(lines) == 2 and all("(Holm-adjusted " in line for line in lines)


@pytest.mark.doc(
    "docs/cli.md",
    "`compare` refuses (exit 2) two runs that ran different samples under a shared sample "
    "id (their sample digests differ), naming them.",
)
def test_assay_compare_refuses_runs_whose_samples_changed(tmp_path: Path) -> None:
    spec_b = _spec(tmp_path / "spec_b", "half")
    data = spec_b.parent / "data.jsonl"
    data.write_text(data.read_text().replace('"q5"', '"q5!"', 1))
    run_spec_at(_spec(tmp_path / "spec_a", "right"), tmp_path / "a")
    run_spec_at(spec_b, tmp_path / "b")
    proc = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "ran different samples under the same id (s5: their sample digests differ)" in line


def test_compare_runs_leaves_unmeasured_pairs_unpaired() -> None:
    a = [record("t", f"s{i}", "unscorable" if i < 3 else "passed") for i in range(10)]
    b = [record("t", f"s{i}", "failed" if i < 3 else "passed") for i in range(10)]
    b[9] = record("t", "s9", "error")
    [c] = compare_runs(a, b, [("t", "t")])
    assert (c.pairs, c.a_only, c.b_only) == (6, 0, 0)  # never A's failures, never B's
    assert (c.unpaired_a, c.unpaired_b, c.unpaired_samples) == (4, 4, 4)
    assert c.only_in_a == c.only_in_b == ["s0", "s1", "s2", "s9"]


def test_a_sample_with_an_unmeasured_repetition_is_left_out_of_the_means() -> None:
    a = [record("t", f"s{i}", "passed", rep) for i in range(5) for rep in (1, 2)]
    b = [record("t", f"s{i}", "error" if (i, rep) == (2, 2) else "passed", rep)
         for i in range(5) for rep in (1, 2)]  # fmt: skip
    mean, trials = compare_runs(a, b, [("t", "t")], repetitions=(2, 2))
    assert (mean.pairs, mean.unpaired_samples, mean.only_in_b) == (4, 1, ["s2"])
    assert (trials.pairs, trials.unpaired_samples) == (9, 1)


def test_the_compare_path_imports_no_scipy() -> None:
    code = (
        "import sys\n"
        "from assay.compare import compare_runs, compare_targets\n"
        "from assay.gate import Baseline, Regression, check_regression\n"
        "rows = [{'target_id': t, 'sample_id': f's{i}', 'repetition': r, 'scorer_id': 'x',\n"
        "         'status': 'passed' if (i + r) % 3 else 'failed', 'value': 0.5 * (i % 3)}\n"
        "        for i in range(40) for t in ('a', 'b') for r in (1, 2)]\n"
        "found = compare_targets(rows, ['a', 'b'], ['x'], repetitions=2)\n"
        "found += compare_runs(rows, rows, [('a', 'b')], repetitions=(2, 2))\n"
        "check_regression(Regression(Baseline('b'), found), 'B:b', 'x', 0.05)\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numpy'))\n"
        "print(len(found), heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["4", "[]"]


@pytest.mark.parametrize(("k", "n"), [(900, 2000), (1000, 2001), (2400, 5000), (49_000, 100_000)])
def test_the_binomial_tail_is_exact_for_many_discordant_pairs(k: int, n: int) -> None:
    from scipy.stats import binom  # type: ignore[import-untyped]

    assert mcnemar_p(k, n - k) == pytest.approx(min(1.0, 2 * binom.cdf(k, n, 0.5)), rel=1e-9)


def test_the_clustered_mcnemar_statistic_sums_net_discordance_per_sample() -> None:
    from assay.compare._pairs import clustered_mcnemar_p

    z = 4 / math.sqrt(4 + 1 + 9)  # nets 2, -1, 3, 0: Σ = 4, Σ² = 14
    assert clustered_mcnemar_p([2, -1, 3, 0]) == pytest.approx(2 * NormalDist().cdf(-z))
    # one pair per sample: McNemar's z = (c - b) / √(b + c)
    nets = [1] * 9 + [-1] * 3
    expected = 2 * NormalDist().cdf(-6 / math.sqrt(12))
    assert clustered_mcnemar_p(nets) == pytest.approx(expected)
    assert clustered_mcnemar_p([0, 0, 0]) == 1.0
