"""The confident minimum through real runs and the real CLI: repetitions weigh as their
samples, and Holm spreads one error rate over the run's checks (exit codes of docs/cli.md:
3 inconclusive)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, simple_spec, write_module

INCONCLUSIVE = 3

TARGETS = """
def first_8_wrong(text):
    return "no" if int(text[1:]) < 8 else text


def first_3_wrong(text):
    return "no" if int(text[1:]) < 3 else text


def tenth_wrong(text):
    return "no" if int(text[1:]) % 10 == 0 else text
"""


def spec_of(folder: Path, answering: dict[str, str], **extra: Any) -> Path:
    """100 echo samples answered by *answering* (target id -> function of TARGETS)."""
    module = f"confident_{uuid.uuid4().hex[:12]}"
    write_module(folder, module, TARGETS)
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(100)]
    targets = [{"id": t, "callable": f"{module}:{f}"} for t, f in answering.items()]
    return simple_spec(folder, samples=samples, targets=targets, **extra)


def run(spec: Path, output: Path) -> tuple[int, dict[str, Any]]:
    ran = run_cli("run", spec, "--output", output)
    assert "Traceback" not in ran.stderr, ran.stderr
    gate: dict[str, Any] = json.loads((output / "report.json").read_text())["gate"]
    return ran.returncode, gate


@pytest.mark.doc(
    "docs/spec.md",
    "With repetitions the interval is clustered by sample (Korn–Graubard's effective n), so 100 "
    "samples × 5 repetitions of a deterministic target weigh as 100 samples, not 500;",
)
def test_five_repetitions_of_a_deterministic_target_are_not_500_trials(tmp_path: Path) -> None:
    # the example: 92 of 100 samples right, every time; Wilson over 500 trials
    # gave [0.893, 0.941] and `passed`; over the samples it is about [0.85, 0.96]
    gate = {"minimum": 0.88, "confidence": 0.95}
    spec = spec_of(tmp_path / "spec", {"t": "first_8_wrong"}, repetitions=5, gate=gate)
    code, decision = run(spec, tmp_path / "run")
    assert code == INCONCLUSIVE, decision["reasons"]
    numbers = decision["targets"][0]["numbers"]["exact"]
    assert (numbers["passed"], numbers["denominator"]) == (460, 500)
    assert numbers["ci_method"] == "clopper-pearson (korn-graubard, clustered by sample)"
    assert 95 < numbers["n_effective"] <= 100
    assert numbers["ci_low"] < 0.88 < numbers["ci_high"]
    assert "clustered exact interval" in decision["targets"][0]["reasons"][0]


@pytest.mark.doc(
    "docs/spec.md",
    "With `multiplicity: holm` (the default) they share that error rate by Holm's step-down "
    "procedure",
    "`multiplicity: none` judges each check on its own.",
)
def test_holm_is_the_default_and_none_opts_out(tmp_path: Path) -> None:
    # 97/100 against 0.9 (p ≈ 0.016) passes alone, not as one of four checks
    answering = {"a": "first_3_wrong", "b": "tenth_wrong", "c": "tenth_wrong", "d": "tenth_wrong"}
    gate = {"minimum": 0.9, "confidence": 0.95}
    code, holm = run(spec_of(tmp_path / "holm", answering, gate=gate), tmp_path / "holm-run")
    assert code == INCONCLUSIVE
    first = holm["targets"][0]
    assert first["status"] == "inconclusive" and "Holm" in first["reasons"][0]
    numbers = first["numbers"]["exact"]
    assert (numbers["multiplicity"], numbers["family_size"]) == ("holm", 4)
    assert numbers["p_value"] <= 0.05 < numbers["p_adjusted"]

    alone = {**gate, "multiplicity": "none"}
    code, plain = run(spec_of(tmp_path / "none", answering, gate=alone), tmp_path / "none-run")
    assert code == INCONCLUSIVE  # b, c and d (0.9 exactly) cannot tell either way
    first = plain["targets"][0]
    assert first["status"] == "passed" and first["numbers"]["exact"]["multiplicity"] == "none"
    spec = json.loads((tmp_path / "none-run" / "spec.json").read_text())
    assert spec["gate"]["multiplicity"] == "none"
