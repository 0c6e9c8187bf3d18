"""The gate rules of docs/spec.md, through real runs of YAML specs and the real CLI.

Each test writes a spec folder, runs it (``assay run``, ``gate``, ``score``, ``resume``)
and reads the decision back from the exit code (docs/cli.md: 0 passed, 1 failed,
3 inconclusive) and from ``report.json``: several scorers, ``gate.scorer``, the
minimum beside ``no_regression``, and where a ``no_regression`` baseline comes from,
what makes it unusable, and how its targets are matched.
"""

from __future__ import annotations

import json
import shutil
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, run_spec_at, simple_spec, start_cli, wait_for, write_module

PASSED, FAILED, INCONCLUSIVE = 0, 1, 3  # exit codes of a gate (docs/cli.md)
INTERRUPTED = 130

TARGETS = """
import asyncio
import os
import pathlib


def right(text):
    return text


def upper(text):
    return text.upper()


def half(text):
    return text if int(text[1:]) % 2 else "no"


def tenth_wrong(text):
    return "no" if int(text[1:]) % 10 == 0 else text


async def hangs_on_demand(text):
    marks = os.environ.get("HANG_MARKS")
    if marks and text != "q0":
        pathlib.Path(marks, text).touch()
        await asyncio.sleep(60)
    return text
"""

EXACT = {"id": "exact", "type": "exact"}
FOLDED = {"id": "folded", "type": "exact", "ignore_case": True}
MARGIN = 0.1


def spec_of(
    folder: Path,
    answering: dict[str, str],
    *,
    n: int = 60,
    scorers: list[dict[str, Any]] | None = None,
    samples: list[dict[str, Any]] | None = None,
    **gate: Any,
) -> Path:
    """A spec whose targets (*answering*: id -> function of TARGETS) answer *n* echo
    samples; *gate* is its gate policy."""
    module = f"rules_{uuid.uuid4().hex[:12]}"  # a fresh name: runs in-process import it
    write_module(folder, module, TARGETS)
    if samples is None:
        samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(n)]
    return simple_spec(
        folder,
        samples=samples,
        targets=[{"id": t, "callable": f"{module}:{f}"} for t, f in answering.items()],
        scorers=scorers or [EXACT],
        gate=gate,
    )


def baseline_run(where: Path, targets: dict[str, str], n: int = 60) -> Path:
    """A complete run of *targets*, to serve as a baseline at *where*."""
    run_spec_at(spec_of(where.parent / f"{where.name}_spec", targets, n=n), where)
    return where


def report_gate(run: Path) -> dict[str, Any]:
    gate: dict[str, Any] = json.loads((run / "report.json").read_text())["gate"]
    return gate


def by_target(gate: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["target_id"]: t for t in gate["targets"]}


def run_gated(spec: Path, run: Path, *args: str | Path) -> tuple[int, dict[str, Any], str]:
    """``assay run SPEC -o RUN ARGS``: its exit code, report.json's gate and its stdout."""
    ran = run_cli("run", spec, "--output", run, *args)
    assert "Traceback" not in ran.stderr, ran.stderr
    return ran.returncode, report_gate(run), ran.stdout


# -- several scorers, and gate.scorer -------------------------------------------------------


@pytest.mark.doc(
    "docs/spec.md",
    "Over several scorers and rules a target takes the worst of their verdicts.",
)
def test_several_scorers_take_the_worst_verdict(tmp_path: Path) -> None:
    # UPPER-cased echoes: `folded` passes every one, `exact` none
    spec = spec_of(tmp_path / "spec", {"t": "upper"}, scorers=[FOLDED, EXACT], minimum=1.0)
    code, gate, stdout = run_gated(spec, tmp_path / "run")
    assert code == FAILED, stdout
    (decision,) = gate["targets"]
    assert (gate["status"], decision["status"], decision["gated"]) == ("failed", "failed", True)
    assert decision["pass_rates"] == {"folded": 1.0, "exact": 0.0}
    folded, exact = decision["reasons"]
    assert folded.startswith("folded:") and "meets the minimum" in folded
    assert exact.startswith("exact:") and "is below the minimum" in exact


def _unscorable_beside_passing(folder: Path, **gate: Any) -> Path:
    """Two regex scorers on samples without an expected value: ``any`` (no group) passes
    every answer; ``group`` (with a group, nothing to compare it with) is unscorable."""
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": None} for i in range(5)]
    scorers = [
        {"id": "any", "type": "regex", "pattern": r"q\d"},
        {"id": "group", "type": "regex", "pattern": r"(q\d)"},
    ]
    return spec_of(folder, {"t": "right"}, samples=samples, scorers=scorers, **gate)


@pytest.mark.doc(
    "docs/spec.md",
    "Over several scorers and rules a target takes the worst of their verdicts.",
    "1. any blocked, invalid or unrun trial, or any unscorable or errored score → "
    "`inconclusive`, with the counts as reasons",
)
def test_one_inconclusive_scorer_makes_the_target_inconclusive(tmp_path: Path) -> None:
    spec = _unscorable_beside_passing(tmp_path / "spec", minimum=0.5)
    code, gate, stdout = run_gated(spec, tmp_path / "run")
    assert code == INCONCLUSIVE, stdout
    (decision,) = gate["targets"]
    assert decision["status"] == "inconclusive"
    assert decision["reasons"] == ["group: 5 unscorable"]
    assert "t: group: 5 unscorable" in stdout


@pytest.mark.parametrize(
    ("scorer", "code", "status"),
    [("folded", PASSED, "passed"), ("exact", FAILED, "failed")],
)
def test_gate_scorer_gates_on_that_scorer_alone(
    tmp_path: Path, scorer: str, code: int, status: str
) -> None:
    spec = spec_of(
        tmp_path / "spec", {"t": "upper"}, scorers=[FOLDED, EXACT], minimum=1.0, scorer=scorer
    )
    ran, gate, stdout = run_gated(spec, tmp_path / "run")
    assert ran == code, stdout
    (decision,) = gate["targets"]
    assert (gate["status"], decision["status"]) == (status, status)
    assert list(decision["numbers"]) == [scorer]  # the other scorer is not looked at
    assert [r.split(":")[0] for r in decision["reasons"]] == [scorer]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    rates = {e["scorer_id"]: e["value"] for e in report["metrics"]["estimates"]}
    assert rates == {"folded": 1.0, "exact": 0.0}  # both are still scored and reported


def test_gate_scorer_ignores_the_evidence_problems_of_the_others(tmp_path: Path) -> None:
    spec = _unscorable_beside_passing(tmp_path / "spec", minimum=1.0, scorer="any")
    code, gate, stdout = run_gated(spec, tmp_path / "run")
    assert code == PASSED, stdout
    assert gate["status"] == "passed" and gate["targets"][0]["reasons"] == [
        "any: pass rate 5/5 = 1 meets the minimum 1"
    ]


# -- the minimum beside no_regression ---------------------------------------------------------


@pytest.mark.parametrize(
    ("new", "base", "minimum", "code", "verdicts"),
    [
        # 0.5 clears a 0.4 minimum, but it is a regression from 1.0
        ("half", "right", 0.4, FAILED, ("passed", "failed")),
        # no regression from the same target, but 0.5 is below a 0.9 minimum
        ("half", "half", 0.9, FAILED, ("failed", "passed")),
        # below the minimum, and 0.1 worse: the interval holds -margin, so it cannot tell
        ("tenth_wrong", "right", 1.0, INCONCLUSIVE, ("failed", "inconclusive")),
    ],
    ids=["regression", "below-minimum", "uncertain-regression"],
)
@pytest.mark.doc(
    "docs/spec.md",
    "Over several scorers and rules a target takes the worst of their verdicts.",
)
def test_the_minimum_and_no_regression_take_the_worst_verdict(
    tmp_path: Path, new: str, base: str, minimum: float, code: int, verdicts: tuple[str, str]
) -> None:
    baseline_run(tmp_path / "spec" / "baseline", {"t": base})
    spec = spec_of(
        tmp_path / "spec",
        {"t": new},
        minimum=minimum,
        no_regression={"margin": MARGIN, "baseline": "baseline"},
    )
    ran, gate, stdout = run_gated(spec, tmp_path / "run")
    assert ran == code, stdout
    (decision,) = gate["targets"]
    assert (
        decision["status"]
        == gate["status"]
        == {FAILED: "failed", INCONCLUSIVE: "inconclusive"}[code]
    )
    minimum_reason, regression_reason = decision["reasons"]
    assert "the minimum" in minimum_reason and "vs baseline" in regression_reason
    (check,) = decision["regression"]
    minimum_status = "passed" if "meets the minimum" in minimum_reason else "failed"
    assert (minimum_status, check["status"]) == verdicts


def test_a_met_minimum_does_not_outweigh_an_unusable_baseline(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path / "spec",
        {"t": "right"},
        minimum=1.0,
        no_regression={"margin": MARGIN, "baseline": "no-such-run"},
    )
    code, gate, stdout = run_gated(spec, tmp_path / "run")
    assert code == INCONCLUSIVE, stdout
    (decision,) = gate["targets"]
    assert decision["status"] == "inconclusive"
    assert any("meets the minimum" in r for r in decision["reasons"])
    assert any("no regression check" in r for r in decision["reasons"])


# -- targets the baseline lacks, and how targets are matched ---------------------------------


@pytest.mark.doc("docs/spec.md", "A target the baseline lacks is `inconclusive`.")
def test_a_target_the_baseline_lacks_is_inconclusive(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"a": "right"})
    spec = spec_of(tmp_path / "spec", {"a": "right", "b": "right"}, no_regression={"margin": 0.1})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == INCONCLUSIVE, stdout
    decisions = by_target(gate)
    assert decisions["a"]["status"] == "passed"  # the target both runs have is compared
    assert decisions["b"]["status"] == "inconclusive"
    (check,) = decisions["b"]["regression"]
    assert check["status"] == "inconclusive" and check["pairs"] == 0
    reason = "exact: the baseline has no scores to pair with 'b' (no common target or scorer)"
    assert decisions["b"]["reasons"] == [reason]
    assert f"b: {reason}" in gate["reasons"]
    assert reason in stdout  # listed where the run's decision is printed


@pytest.mark.doc(
    "docs/spec.md",
    "- **Targets** are matched by id; when both runs have a single target, with each other.",
)
def test_targets_are_matched_by_id_not_by_position(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"a": "half", "b": "right"})
    spec = spec_of(tmp_path / "spec", {"b": "right", "a": "half"}, no_regression={"margin": 0.1})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == PASSED, stdout  # by position, `b` (right) would face `a` (half)
    for target, decision in by_target(gate).items():
        (check,) = decision["regression"]
        assert check["baseline_target"] == target and check["difference"] == 0.0


@pytest.mark.doc("docs/spec.md", "when both runs have a single target, with each other.")
def test_a_single_target_is_matched_with_the_baselines_single_target(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"release-1": "right"})
    spec = spec_of(tmp_path / "spec", {"release-2": "half"}, no_regression={"margin": 0.1})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == FAILED, stdout
    (check,) = gate["targets"][0]["regression"]
    assert check["baseline_target"] == "release-1" and check["pairs"] == 60


def test_no_common_target_among_several_is_inconclusive(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"x": "right", "y": "right"})
    spec = spec_of(tmp_path / "spec", {"z": "right"}, no_regression={"margin": 0.1})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == INCONCLUSIVE, stdout
    assert "has none of the targets z" in gate["baseline"]["problem"]


# -- where the baseline is, and what makes it unusable -----------------------------------------


@pytest.mark.doc(
    "docs/spec.md",
    "The decision records the baseline's path, spec digest and events head (`gate.baseline`).",
)
def test_the_decision_records_the_baselines_path_digest_and_head(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"t": "right"})
    manifest = json.loads((baseline / "manifest.json").read_text())
    spec = spec_of(tmp_path / "spec", {"t": "right"}, no_regression={"margin": MARGIN})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == PASSED, stdout
    assert gate["baseline"] == {
        "path": str(baseline),
        "spec_digest": manifest["spec_digest"],
        "events_head": manifest["events_head"],
        "problem": None,
    }


@pytest.mark.doc(
    "docs/spec.md",
    "In CI, download the last release's run folder and pass it with `--baseline`.",
)
def test_a_run_folder_copied_from_elsewhere_serves_as_the_baseline(tmp_path: Path) -> None:
    built = baseline_run(tmp_path / "ci-artifacts" / "release", {"t": "right"})
    downloaded = tmp_path / "job" / "last-release"
    shutil.copytree(built, downloaded)
    shutil.rmtree(built)  # the run that made it is gone: only the copy is left
    spec = spec_of(tmp_path / "spec", {"t": "half"}, no_regression={"margin": MARGIN})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", downloaded)
    assert code == FAILED, stdout  # it was used: half of the release's passes are lost
    assert gate["baseline"]["problem"] is None and gate["baseline"]["path"] == str(downloaded)


@pytest.mark.doc(
    "docs/spec.md",
    "names the baseline run folder; it wins over the spec's `baseline`",
)
def test_the_command_line_baseline_wins_over_the_specs(tmp_path: Path) -> None:
    baseline_run(tmp_path / "spec" / "better", {"t": "right"})
    worse = baseline_run(tmp_path / "worse", {"t": "half"})
    spec = spec_of(
        tmp_path / "spec", {"t": "half"}, no_regression={"margin": MARGIN, "baseline": "better"}
    )
    code, gate, _ = run_gated(spec, tmp_path / "by-spec")
    assert code == FAILED and gate["baseline"]["path"].endswith("better")
    code, gate, stdout = run_gated(spec, tmp_path / "by-option", "--baseline", worse)
    assert code == PASSED, stdout
    assert gate["baseline"]["path"] == str(worse)


@pytest.mark.doc(
    "docs/spec.md", "(or `assay gate RUN --baseline BASE`, `assay score`, `assay resume`)"
)
def test_score_and_gate_take_a_baseline_too(tmp_path: Path) -> None:
    good = baseline_run(tmp_path / "good", {"t": "right"})
    spec = spec_of(
        tmp_path / "spec", {"t": "right"}, no_regression={"margin": MARGIN, "baseline": "gone"}
    )
    code, _, _ = run_gated(spec, tmp_path / "run")
    assert code == INCONCLUSIVE  # the spec's baseline does not exist
    rescored = run_cli("score", tmp_path / "run", "--baseline", good)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr  # scores unchanged
    assert "gate: passed" in rescored.stdout
    assert "gate: inconclusive" in run_cli("score", tmp_path / "run").stdout
    assert run_cli("gate", tmp_path / "run", "--baseline", good).returncode == PASSED


def interrupted_run(spec: Path, run: Path, marks: Path) -> Path:
    """Start ``assay run`` on *spec*, let one trial finish and the others hang, then
    press Ctrl-C: a real run sealed ``interrupted``."""
    marks.mkdir()
    proc = start_cli("run", spec, "--output", run, "-j", "4", env={"HANG_MARKS": str(marks)})
    assert wait_for(lambda: len(list(marks.iterdir())) >= 3, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == INTERRUPTED, err
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    return run


@pytest.mark.doc(
    "docs/spec.md", "(or `assay gate RUN --baseline BASE`, `assay score`, `assay resume`)"
)
def test_resume_takes_a_baseline_too(tmp_path: Path) -> None:
    good = baseline_run(tmp_path / "good", {"t": "right"}, n=8)
    spec = spec_of(tmp_path / "spec", {"t": "hangs_on_demand"}, n=8, no_regression={"margin": 0.5})
    run = interrupted_run(spec, tmp_path / "run", tmp_path / "marks")
    resumed = run_cli("resume", run, "--baseline", good)
    assert resumed.returncode == PASSED, resumed.stdout + resumed.stderr
    assert report_gate(run)["baseline"]["path"] == str(good)


def _missing(tmp_path: Path, baseline: Path) -> tuple[Path, str]:
    return tmp_path / "no-such-run", "no such folder"


def _not_a_run(tmp_path: Path, baseline: Path) -> tuple[Path, str]:
    folder = tmp_path / "just-a-folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("not evidence\n")
    return folder, "cannot be used"


def _altered(tmp_path: Path, baseline: Path) -> tuple[Path, str]:
    report = baseline / "report.md"
    data = bytearray(report.read_bytes())
    data[-2] ^= 0x01  # one bit of one byte of a file the manifest pins
    report.write_bytes(bytes(data))
    return baseline, "does not verify (1 problem(s), first: "


@pytest.mark.parametrize("unusable", [_missing, _not_a_run, _altered])
@pytest.mark.doc(
    "docs/spec.md",
    "A baseline that is missing, not a run, not complete, or altered in any byte makes the "
    "check `inconclusive` with the reason",
    "its scores are never used, and it never passes.",
    "It is verified in full first (as `assay verify` does).",
)
def test_an_unusable_baseline_is_inconclusive_never_passed(tmp_path: Path, unusable: Any) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"t": "right"})
    path, problem = unusable(tmp_path, baseline)
    spec = spec_of(tmp_path / "spec", {"t": "right"}, minimum=1.0, no_regression={"margin": 0.1})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", path)
    assert code == INCONCLUSIVE, stdout
    assert problem in gate["baseline"]["problem"], gate["baseline"]
    (check,) = gate["targets"][0]["regression"]
    assert check["status"] == "inconclusive" and check["pairs"] == 0  # no score was read
    assert any(problem in reason for reason in gate["reasons"])


@pytest.mark.doc("docs/spec.md", "A baseline that is missing, not a run, not complete")
def test_an_interrupted_baseline_is_inconclusive(tmp_path: Path) -> None:
    base_spec = spec_of(tmp_path / "base_spec", {"t": "hangs_on_demand"}, n=8)
    baseline = interrupted_run(base_spec, tmp_path / "baseline", tmp_path / "marks")
    assert run_cli("verify", baseline).returncode == 3  # intact evidence, but unfinished
    spec = spec_of(tmp_path / "spec", {"t": "right"}, n=8, no_regression={"margin": 0.5})
    code, gate, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == INCONCLUSIVE, stdout
    assert gate["baseline"]["problem"] == f"the baseline {baseline} is interrupted, not complete"


# -- the numbers behind a decision ------------------------------------------------------------


@pytest.mark.doc(
    "docs/spec.md",
    "Every decision lists the numbers behind it (`gate.targets[].numbers` in `report.json`: "
    "rate, passed, denominator, `ci_low`, `ci_high`, `ci_level`, `ci_method` (the bounds the "
    "gate decides with), minimum,",
    "and with `min_effect` also `n_samples` and `n_needed`; `gate.targets[].regression` for "
    "`no_regression`).",
)
def test_every_decision_lists_the_numbers_behind_it(tmp_path: Path) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"t": "right"}, n=20)
    plain = spec_of(tmp_path / "plain", {"t": "half"}, n=20, minimum=0.5)
    assert run_gated(plain, tmp_path / "plain-run")[0] == PASSED
    (decision,) = report_gate(tmp_path / "plain-run")["targets"]
    numbers = decision["numbers"]["exact"]
    core = {"rate", "passed", "denominator", "ci_low", "ci_high", "ci_level", "ci_method"}
    core |= {"minimum"}
    assert set(numbers) == core and decision["regression"] == []
    assert (numbers["rate"], numbers["passed"], numbers["denominator"]) == (0.5, 10, 20)
    assert numbers["ci_low"] < 0.5 < numbers["ci_high"] and numbers["ci_level"] == 0.95
    assert numbers["minimum"] == 0.5

    full = spec_of(
        tmp_path / "full",
        {"t": "half"},
        n=20,
        minimum=0.5,
        min_effect=0.3,
        no_regression={"margin": 0.2},
    )
    run_gated(full, tmp_path / "full-run", "--baseline", baseline)
    (decision,) = report_gate(tmp_path / "full-run")["targets"]
    numbers = decision["numbers"]["exact"]
    assert {"n_samples", "n_needed"} <= set(numbers) and numbers["n_samples"] == 20
    (check,) = decision["regression"]
    assert check["pairs"] == 20 and check["difference"] == -0.5


# -- what the example spec's comments promise ---------------------------------------------


@pytest.mark.parametrize(
    ("override", "code"), [(0.4, PASSED), (0.6, FAILED)], ids=["met", "missed"]
)
def test_a_per_target_minimum_overrides_the_minimum(
    tmp_path: Path, override: float, code: int
) -> None:
    spec = spec_of(
        tmp_path / "spec", {"a": "right", "b": "half"}, minimum=1.0, targets={"b": override}
    )
    ran, gate, stdout = run_gated(spec, tmp_path / "run")
    assert ran == code, stdout
    decisions = by_target(gate)
    assert (decisions["a"]["minimum"], decisions["b"]["minimum"]) == (1.0, override)
    assert decisions["a"]["status"] == "passed"  # 1.0 still holds for the other target


@pytest.mark.parametrize(
    ("gate", "level"),
    [
        ({}, 0.95),  # no confidence anywhere: 0.95
        ({"confidence": 0.8}, 0.8),  # the gate's confidence
        ({"confidence": 0.8, "regression_confidence": 0.99}, 0.99),  # its own
    ],
    ids=["default", "the-gates", "its-own"],
)
def test_the_paired_interval_is_at_the_declared_level(
    tmp_path: Path, gate: dict[str, float], level: float
) -> None:
    baseline = baseline_run(tmp_path / "baseline", {"t": "right"})
    policy: dict[str, Any] = {"margin": MARGIN}
    if "regression_confidence" in gate:
        policy["confidence"] = gate.pop("regression_confidence")
    spec = spec_of(tmp_path / "spec", {"t": "right"}, no_regression=policy, **gate)
    code, report, stdout = run_gated(spec, tmp_path / "run", "--baseline", baseline)
    assert code == PASSED, stdout
    (check,) = report["targets"][0]["regression"]
    assert check["ci_level"] == level
