"""The no_regression gate: paired against a verified baseline run, with a margin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from assay.compare import paired_interval, pairs_needed, summarize
from assay.errors import ConfigError
from assay.gate import Baseline, Regression, check_regression, judge_regression
from assay.spec import load_spec
from tests.helpers import (
    error_line,
    read_jsonl,
    run_cli,
    run_spec_at,
    simple_spec,
    write_module,
)

TARGETS = """
def right(text):
    return text

def tenth_wrong(text):
    return "no" if int(text[1:]) % 10 == 0 else text

def half(text):
    return text if int(text[1:]) % 2 else "no"
"""


def _spec(folder: Path, function: str, n: int = 60, **gate: Any) -> Path:
    module = "noreg_" + folder.name.replace("-", "_")
    write_module(folder, module, TARGETS)
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(n)]
    targets = [{"id": "t", "callable": f"{module}:{function}"}]
    return simple_spec(folder, samples=samples, targets=targets, gate=gate)


def _baseline(tmp_path: Path, function: str = "right", n: int = 60) -> Path:
    """A baseline run inside the new spec's folder (so the spec may name it)."""
    run_spec_at(_spec(tmp_path / "base_spec", function, n), tmp_path / "new" / "baseline")
    return tmp_path / "new" / "baseline"


def _gate(report: Path) -> dict[str, Any]:
    gate: dict[str, Any] = json.loads((report / "report.json").read_text())["gate"]
    return gate


@pytest.mark.doc(
    "docs/spec.md",
    "5. with `no_regression`: each scorer is compared with the same target in the baseline "
    "run (see below) — `passed` when the lower bound of the paired interval of *new − "
    "baseline* is above `−margin`, `failed` when its upper bound is below `−margin`, "
    "otherwise `inconclusive`.",
    '- **Margin.** "Not worse at all" can never be shown from a sample, so a margin of 0 '
    "passes nothing",
)
def test_judge_regression_honours_the_margin() -> None:
    equal = summarize(("base", "new"), "exact", (95, 95, 0, 0, 100), [], 0, 0.95)
    assert judge_regression(equal, 0.05)[0] == "passed"
    assert judge_regression(equal, 0.0)[0] == "inconclusive"  # "not worse at all" is unprovable
    worse = summarize(("base", "new"), "exact", (95, 60, 36, 1, 100), [], 0, 0.95)
    assert judge_regression(worse, 0.05)[0] == "failed"
    slightly = summarize(("base", "new"), "exact", (95, 90, 7, 2, 100), [], 0, 0.95)
    assert judge_regression(slightly, 0.05)[0] == "inconclusive"


@pytest.mark.doc(
    "docs/spec.md",
    "`passed` when the lower bound of the paired interval of *new − baseline* is above `−margin`",
    "- **Which test.** Pass/fail scores with one repetition: exact McNemar on the discordant "
    "pairs, with Tango's score interval of the difference of pass rates",
)
def test_no_regression_from_the_spec_passes_an_equal_target(tmp_path: Path) -> None:
    _baseline(tmp_path)
    spec = _spec(tmp_path / "new", "right", no_regression={"baseline": "baseline", "margin": 0.1})
    ran = run_cli("run", spec, "--output", tmp_path / "run")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    gate = _gate(tmp_path / "run")
    assert gate["status"] == "passed"
    assert gate["baseline"]["problem"] is None and gate["baseline"]["events_head"]
    [check] = gate["targets"][0]["regression"]
    assert (check["pairs"], check["baseline_only"], check["new_only"]) == (60, 0, 0)
    assert check["test"] == "exact-mcnemar" and check["margin"] == 0.1
    assert check["ci_low"] > -0.1 and check["p_value"] == 1.0
    md = (tmp_path / "run" / "report.md").read_text()
    assert "## No regression against the baseline" in md
    # re-gating finds the spec's baseline again, inside the folder the spec was run from
    assert run_cli("gate", tmp_path / "run").returncode == 0
    assert 'id="regression"' in (tmp_path / "run" / "report.html").read_text()


@pytest.mark.doc(
    "docs/spec.md",
    "`failed` when its upper bound is below `−margin`",
    "A target without a minimum is reported, not gated (unless `min_effect` or "
    "`no_regression` is declared).",
)
def test_a_worse_target_fails_and_the_numbers_say_why(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path)
    spec = _spec(tmp_path / "new", "half", no_regression={"margin": 0.05})
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    [check] = _gate(tmp_path / "run")["targets"][0]["regression"]
    assert (check["baseline_only"], check["new_only"]) == (30, 0)
    assert check["difference"] == pytest.approx(-0.5) and check["ci_high"] < -0.05
    assert check["p_value"] < 1e-6
    assert "upper bound below -0.05" in check["reason"]


@pytest.mark.doc(
    "docs/spec.md",
    "5. with `no_regression`: each scorer is compared with the same target in the baseline run",
)
def test_a_small_drop_inside_the_interval_is_inconclusive(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path)
    spec = _spec(tmp_path / "new", "tenth_wrong", no_regression={"margin": 0.05})
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 3, ran.stdout
    [check] = _gate(tmp_path / "run")["targets"][0]["regression"]
    assert check["status"] == "inconclusive" and check["ci_low"] < -0.05 < check["ci_high"]


@pytest.mark.doc(
    "docs/spec.md",
    "- **The baseline is evidence.** It is verified in full first (as `assay verify` does).",
    '(e.g. "does not verify (1 problem(s), first: …)"); its scores are never used, and it '
    "never passes.",
)
@pytest.mark.doc(
    "docs/cli.md",
    "The baseline is verified before it is used: one that is missing, incomplete or altered "
    "makes the gate `inconclusive` (exit 3), never `passed`.",
)
def test_a_tampered_baseline_is_never_passed(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, "half")
    scores = baseline / "scores.jsonl"
    scores.write_text(scores.read_text().replace('"failed"', '"passed"'))
    spec = _spec(tmp_path / "new", "right", no_regression={"margin": 0.1})
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 3, ran.stdout
    gate = _gate(tmp_path / "run")
    assert "does not verify" in gate["baseline"]["problem"]
    assert any("does not verify" in r for r in gate["reasons"])


@pytest.mark.doc(
    "docs/spec.md",
    "`assay run SPEC --baseline RUN` (or `assay gate RUN --baseline BASE`",
)
@pytest.mark.doc(
    "docs/cli.md",
    "`--baseline BASE` — the baseline run folder for the spec's `no_regression` gate policy "
    "(see `docs/spec.md`); it wins over the spec's `baseline`.",
    "The baseline is verified before it is used: one that is missing, incomplete or altered "
    "makes the gate `inconclusive` (exit 3), never `passed`.",
)
def test_assay_gate_rechecks_against_another_baseline(tmp_path: Path) -> None:
    policy = {"baseline": "missing", "margin": 0.05}
    spec = _spec(tmp_path / "new", "half", n=80, no_regression=policy)
    ran = run_cli("run", spec, "--output", tmp_path / "run")
    assert ran.returncode == 3  # the declared baseline does not exist
    assert "not_a_run" not in ran.stdout and "no such folder" in ran.stdout
    worse = _baseline(tmp_path, "half", n=80)  # the same target: no regression
    again = run_cli("gate", tmp_path / "run", "--baseline", worse)
    assert again.returncode == 0, again.stdout
    better = tmp_path / "better"
    run_spec_at(_spec(tmp_path / "better_spec", "right", n=80), better)
    assert run_cli("gate", tmp_path / "run", "--baseline", better).returncode == 1


@pytest.mark.doc(
    "docs/spec.md",
    "assay pairs them by sample id (and repetition) and compares only what both runs have; "
    "samples only one run has are counted and named in the decision, never scored as a pass "
    "or a failure of the other.",
)
def test_samples_in_only_one_run_are_reported_not_paired(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, n=50)
    policy = {"margin": 0.1, "max_unpaired": 10}
    spec = _spec(tmp_path / "new", "right", n=60, no_regression=policy)
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 0, ran.stdout
    [check] = _gate(tmp_path / "run")["targets"][0]["regression"]
    assert (check["pairs"], check["unpaired_baseline"], check["unpaired_new"]) == (50, 0, 10)
    assert check["unpaired_samples"] == 10
    assert sorted(check["only_in_new"]) == sorted(f"s{i}" for i in range(50, 60))
    assert "10 of this run's" in check["reason"]


@pytest.mark.doc(
    "docs/spec.md",
    "Continuous scores (any value other than 0 and 1), or repetitions in either run: the "
    "mean score per sample (over its repetitions), the same score interval with each "
    "sample's difference d counted as a fractional discordant pair (max(0, d) to the new "
    "run, max(0, −d) to the baseline), and the sign test's p-value.",
)
def test_repetitions_are_judged_by_the_score_interval_of_sample_means(tmp_path: Path) -> None:
    base_spec = _spec(tmp_path / "base_spec", "right", n=40)
    base_spec.write_text(base_spec.read_text() + "repetitions: 2\n")
    run_spec_at(base_spec, tmp_path / "baseline")
    spec = _spec(tmp_path / "new", "tenth_wrong", n=40, no_regression={"margin": 0.3})
    spec.write_text(spec.read_text() + "repetitions: 2\n")
    for attempt in ("first", "again"):
        ran = run_cli(
            "run", spec, "--output", tmp_path / attempt, "--baseline", tmp_path / "baseline"
        )
        assert ran.returncode == 0, ran.stdout
    [check] = _gate(tmp_path / "first")["targets"][0]["regression"]
    assert (check["measure"], check["test"], check["ci_method"]) == (
        "mean", "sign-test", "tango-score-means"
    )  # fmt: skip
    assert (check["pairs"], check["baseline_only"], check["new_only"]) == (40, 4, 0)
    assert check["difference"] == pytest.approx(-0.1)
    assert (check["ci_low"], check["ci_high"]) == paired_interval(4.0, 0.0, 40)
    [again] = _gate(tmp_path / "again")["targets"][0]["regression"]
    assert (again["ci_low"], again["ci_high"]) == (check["ci_low"], check["ci_high"])  # seeded


@pytest.mark.doc(
    "docs/spec.md",
    "The margin and confidence always come from the frozen spec: `--baseline` for a spec "
    "without a `no_regression` policy is a usage error (exit 2), never a silent default.",
)
@pytest.mark.doc(
    "docs/cli.md",
    "Refused (exit 2, before anything runs) when the spec declares no `no_regression` policy.",
)
def test_baseline_without_a_policy_is_a_usage_error(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path)
    spec = _spec(tmp_path / "new", "right", minimum=1.0)
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 2
    line = error_line(ran)
    assert f"--baseline {baseline} was given" in line and "no gate.no_regression" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.doc(
    "docs/spec.md",
    "A declared policy with no baseline at all is `inconclusive`.",
)
def test_no_regression_without_any_baseline_is_inconclusive(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "new", "right", no_regression={"margin": 0.1})
    ran = run_cli("run", spec, "--output", tmp_path / "run")
    assert ran.returncode == 3 and "--baseline" in ran.stdout


@pytest.mark.parametrize(
    "policy",
    [
        {"margin": -0.1},
        {"margin": 1.0},
        {"margin": 0.1, "confidence": 1.0},
        {"margin": 0.1, "baseline": "/abs/run"},
        {"margin": 0.1, "baseline": "../outside"},
        {"baseline": "runs/last"},
        {"margin": 0.1, "base": "x"},
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "which is resolved inside the spec's folder under the usual path rules (no absolute "
    "paths, no `..`, no symlink out).",
)
def test_spec_refuses_bad_no_regression_policies(tmp_path: Path, policy: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        load_spec(simple_spec(tmp_path, gate={"no_regression": policy}))


def test_spec_without_no_regression_keeps_its_digest(tmp_path: Path) -> None:
    plain = load_spec(simple_spec(tmp_path / "a", gate={"minimum": 1.0})).spec
    assert b"no_regression" not in plain.canonical()
    policy = {"minimum": 1.0, "no_regression": {"margin": 0.02}}
    declared = load_spec(simple_spec(tmp_path / "b", gate=policy)).spec
    assert b'"no_regression":{"margin":0.02}' in declared.canonical()
    assert declared.gate.regression_level == 0.95


@pytest.mark.doc(
    "docs/spec.md",
    "which is resolved inside the spec's folder under the usual path rules (no absolute "
    "paths, no `..`, no symlink out).",
)
def test_a_baseline_symlinked_out_of_the_spec_folder_is_not_used(tmp_path: Path) -> None:
    outside = _baseline(tmp_path)
    spec = _spec(tmp_path / "other", "right", no_regression={"baseline": "link", "margin": 0.1})
    (tmp_path / "other" / "link").symlink_to(outside, target_is_directory=True)
    outcome = run_spec_at(spec, tmp_path / "run")
    assert outcome.gate.status == "inconclusive"
    assert outcome.gate.baseline is not None
    assert "symbolic link" in str(outcome.gate.baseline.problem)


ABORTING = """
class Abort(BaseException):
    \"\"\"Stands for Ctrl-C or a crash: not an error of the target, it stops the run.\"\"\"


async def answer(text):
    if text == "q5":
        raise Abort("stop the run")
    return text
"""


@pytest.mark.doc(
    "docs/cli.md",
    "The baseline is verified before it is used: one that is missing, incomplete or altered "
    "makes the gate `inconclusive` (exit 3), never `passed`.",
)
def test_an_incomplete_baseline_is_never_passed(tmp_path: Path) -> None:
    folder = tmp_path / "base_spec"
    write_module(folder, "noreg_aborting", ABORTING)
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(60)]
    targets = [{"id": "t", "callable": "noreg_aborting:answer"}]
    baseline = tmp_path / "new" / "baseline"
    with pytest.raises(BaseException, match="stop the run"):
        run_spec_at(simple_spec(folder, samples=samples, targets=targets), baseline)
    assert json.loads((baseline / "manifest.json").read_text())["status"] != "complete"
    spec = _spec(tmp_path / "new", "right", no_regression={"margin": 0.1})
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    gate = _gate(tmp_path / "run")
    assert gate["status"] == "inconclusive"
    assert gate["baseline"]["problem"] == f"the baseline {baseline} is interrupted, not complete"


FLAKY_BASELINE = """
def blocked_first_30(text):
    if int(text[1:]) < 30:
        raise ConnectionError("the service is down")
    return text


def fails_first_30(text):
    return "no" if int(text[1:]) < 30 else text
"""


def _flaky_pair(tmp_path: Path, **policy: Any) -> tuple[Path, Path]:
    """A baseline that could not measure s0–s29 (the service was down) and a new spec
    whose target fails exactly those 30 samples: the case that used to pass."""
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(100)]

    def spec_of(folder: Path, function: str, gate: dict[str, Any]) -> Path:
        write_module(folder, "flaky_" + folder.name, FLAKY_BASELINE)
        targets = [{"id": "t", "callable": f"flaky_{folder.name}:{function}"}]
        retry = {"max_attempts": 1}
        return simple_spec(folder, samples=samples, targets=targets, gate=gate, retry=retry)

    baseline = tmp_path / "new" / "baseline"
    run_spec_at(spec_of(tmp_path / "base_spec", "blocked_first_30", {}), baseline)
    policy = {"margin": 0.1, **policy}
    return spec_of(tmp_path / "new", "fails_first_30", {"no_regression": policy}), baseline


@pytest.mark.doc(
    "docs/spec.md",
    "A pair is compared only when both runs measured it (passed or failed): a trial the "
    "baseline could not measure (blocked, invalid, not run, unscorable or errored) is "
    "unpaired, never a baseline failure.",
    "More unpaired samples (absent from one run, or not measured in either) than "
    "`max_unpaired` (default 0) make the check `inconclusive`, naming them.",
)
def test_samples_the_baseline_could_not_measure_are_unpaired_not_failures(
    tmp_path: Path,
) -> None:
    spec, baseline = _flaky_pair(tmp_path)
    base_scores = read_jsonl(baseline / "scores.jsonl")
    assert sum(s["status"] == "unscorable" for s in base_scores) == 30
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    [check] = _gate(tmp_path / "run")["targets"][0]["regression"]
    assert check["status"] == "inconclusive" and check["pairs"] == 70
    assert (check["baseline_only"], check["new_only"], check["unpaired_samples"]) == (0, 0, 30)
    assert "30 sample(s) not paired with the baseline" in check["reason"]
    assert "more than max_unpaired 0: s0, s1, s10," in check["reason"]
    assert "s0, s1, s10" in ran.stdout


@pytest.mark.doc(
    "docs/spec.md",
    "More unpaired samples (absent from one run, or not measured in either) than "
    "`max_unpaired` (default 0) make the check `inconclusive`, naming them.",
)
def test_a_declared_tolerance_of_unpaired_samples_judges_the_rest(tmp_path: Path) -> None:
    spec, baseline = _flaky_pair(tmp_path, max_unpaired=30)
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [check] = _gate(tmp_path / "run")["targets"][0]["regression"]
    assert (check["status"], check["pairs"], check["unpaired_samples"]) == ("passed", 70, 30)
    tighter = spec.read_text().replace("max_unpaired: 30", "max_unpaired: 29")
    assert tighter != spec.read_text()
    spec.write_text(tighter)
    again = run_cli("run", spec, "--output", tmp_path / "again", "--baseline", baseline)
    assert again.returncode == 3, again.stdout


@pytest.mark.doc(
    "docs/spec.md",
    "A sample id both runs have must name the same sample (the digest of the sample in "
    "each trial's bundle).",
    "A baseline that ran a different sample under a shared id cannot be used: the check is "
    "`inconclusive` (exit 3), and its reason names the sample.",
)
def test_a_baseline_that_ran_a_changed_sample_is_not_used(tmp_path: Path) -> None:
    base_spec = _spec(tmp_path / "base_spec", "right", n=80)
    data = base_spec.parent / "data.jsonl"
    assert '"input": "q3"' in data.read_text() or '"input":"q3"' in data.read_text()
    data.write_text(data.read_text().replace('"q3"', '"q3?"', 1))  # s3's question changed
    run_spec_at(base_spec, tmp_path / "new" / "baseline")
    spec = _spec(tmp_path / "new", "right", n=80, no_regression={"margin": 0.1})
    baseline = tmp_path / "new" / "baseline"
    ran = run_cli("run", spec, "--output", tmp_path / "run", "--baseline", baseline)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    gate = _gate(tmp_path / "run")
    problem = gate["baseline"]["problem"]
    assert "ran different samples under the same id (s3: their sample digests differ)" in problem
    assert gate["targets"][0]["regression"][0]["status"] == "inconclusive"


@pytest.mark.doc(
    "docs/spec.md",
    "`max_unpaired` is left out of `spec.json` when 0, so older specs keep their digests.",
)
def test_max_unpaired_is_frozen_into_the_spec_only_when_declared(tmp_path: Path) -> None:
    plain = load_spec(simple_spec(tmp_path / "a", gate={"no_regression": {"margin": 0.02}}))
    assert b'"no_regression":{"margin":0.02}' in plain.spec.canonical()
    policy = {"no_regression": {"margin": 0.02, "max_unpaired": 3}}
    declared = load_spec(simple_spec(tmp_path / "b", gate=policy)).spec
    assert b'"max_unpaired":3' in declared.canonical()
    assert declared.digest != plain.spec.digest
    negative = {"no_regression": {"margin": 0.02, "max_unpaired": -1}}
    with pytest.raises(ConfigError, match="max_unpaired"):
        load_spec(simple_spec(tmp_path / "c", gate=negative))


@pytest.mark.parametrize("margin", [0.01, 0.02, 0.05, 0.1])
@pytest.mark.doc(
    "docs/spec.md",
    'Each check records `p_pass`, the one-sided p-value of "new − baseline ≤ −margin" '
    '(small: evidence of no regression), and `p_fail`, that of "new − baseline ≥ '
    '−margin" (small: evidence of one), from the same score statistic as the interval: '
    "the check passes exactly when `p_pass` < (1 − confidence)/2 and fails exactly when "
    "`p_fail` < (1 − confidence)/2.",
)
def test_the_p_values_at_the_margin_agree_with_the_verdict(margin: float) -> None:
    seen = set()
    for n in (40, 100, 400):
        for a_only in range(0, n // 4, max(1, n // 40)):
            for b_only in range(0, n // 4, max(1, n // 40)):
                table = (n - a_only, n - b_only, a_only, b_only, n)
                comparison = summarize(("baseline:t", "t"), "exact", table, [], 0, 0.95)
                regression = Regression(Baseline("base"), [comparison])
                check = check_regression(regression, "t", "exact", margin)
                assert (check.p_pass < 0.025) == (check.status == "passed"), check.reason
                assert (check.p_fail < 0.025) == (check.status == "failed"), check.reason
                assert check.p_pass + check.p_fail == pytest.approx(1.0)
                seen.add(check.status)
    assert seen == {"passed", "failed", "inconclusive"}


@pytest.mark.doc(
    "docs/spec.md",
    "Identical runs pass only from the smallest n with n · margin / (1 − margin) > z² (at "
    "confidence 0.95: 73 samples for a margin of 0.05, 189 for 0.02, 381 for 0.01).",
    "Below it, a check the interval does not already decide is `inconclusive` and its "
    "reason says how many samples are needed (`n_needed` in the decision).",
)
def test_too_few_pairs_for_the_margin_say_how_many_are_needed() -> None:
    assert [pairs_needed(m, 0.95) for m in (0.05, 0.02, 0.01)] == [73, 189, 381]
    assert pairs_needed(0.0, 0.95) is None

    def identical(n: int, margin: float) -> Any:
        same = summarize(("baseline:t", "t"), "exact", (n, n, 0, 0, n), [], 0, 0.95)
        return check_regression(Regression(Baseline("b"), [same]), "t", "exact", margin)

    for margin, needed in ((0.05, 73), (0.02, 189)):
        assert (identical(needed, margin).status, identical(needed, margin).n_needed) == (
            "passed", needed
        )  # fmt: skip
        short = identical(needed - 1, margin)
        assert short.status == "inconclusive" and short.n_needed == needed
        assert f"{needed - 1} paired sample(s) cannot show a margin" in short.reason
        assert f"at least {needed} are needed" in short.reason


def test_an_evidence_problem_leaves_no_p_value_to_pass_on() -> None:
    # a multiplicity procedure reads p_pass: it must not pass a check the evidence voids
    better = summarize(("baseline:t", "t"), "exact", (50, 90, 0, 40, 100), [], 0, 0.95)
    unpaired = msgspec.structs.replace(better, unpaired_samples=3, only_in_a=["s1", "s2", "s3"])
    counted = check_regression(Regression(Baseline("b"), [better]), "t", "exact", 0.05)
    assert counted.status == "passed" and counted.p_pass < 1e-6
    voided = check_regression(Regression(Baseline("b"), [unpaired]), "t", "exact", 0.05)
    assert voided.status == "inconclusive" and (voided.p_pass, voided.p_fail) == (1.0, 1.0)
    assert "3 sample(s) not paired" in voided.reason and "s1, s2, s3" in voided.reason
    missing = check_regression(Regression(Baseline("b", problem="gone")), "t", "exact", 0.05)
    assert (missing.status, missing.p_pass, missing.p_fail) == ("inconclusive", 1.0, 1.0)
