"""The no_regression gate: paired against a verified baseline run, with a margin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.compare import paired_interval, summarize
from assay.errors import ConfigError
from assay.gate import judge_regression
from assay.spec import load_spec
from tests.helpers import error_line, run_cli, run_spec_at, simple_spec, write_module

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
    "mean score per sample (over its repetitions), the paired percentile bootstrap of the "
    "per-sample differences (1,000 resamples, seeded) and the sign test's p-value.",
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
