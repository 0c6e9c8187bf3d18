"""The shipping example end to end through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import SHIPPING, edit_artifact, run_cli


@pytest.mark.doc(
    "docs/cli.md",
    "| `run SPEC [-o RUN] [-j N] [--dry-run] [--sink URL] [--sink-max-failure-rate R] [--baseline "
    "BASE] [--cluster ADDRESS] [--progress]` | plan, run every trial, write evidence, score, "
    "gate, write reports |",
    "| `gate RUN [--baseline BASE]` | verify, then re-decide the gate from the evidence; exit "
    "code is the decision |",
)
def test_shipping_run_verify_score_gate(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = run_cli("run", SHIPPING / "eval.yaml", "--output", out)
    assert ran.returncode == 1, ran.stderr
    assert "buggy-release" in ran.stdout and "gate: failed" in ran.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["planned"] == 6
    assert len((out / "plan.jsonl").read_text().splitlines()) == 6  # planned
    assert len((out / "bundles.jsonl").read_text().splitlines()) == 6  # every trial run
    assert len((out / "scores.jsonl").read_text().splitlines()) == 6  # and scored
    assert "Gate" in (out / "report.md").read_text() and (out / "report.html").is_file()
    decisions = {d["target_id"]: d["status"] for d in report["gate"]["targets"]}
    assert decisions == {"buggy-release": "failed", "fixed-release": "passed"}
    estimates = report["metrics"]["estimates"]
    rates = {(e["target_id"], e["passed"], e["denominator"]) for e in estimates}
    assert rates == {("buggy-release", 2, 3), ("fixed-release", 3, 3)}
    assert run_cli("verify", out).returncode == 0
    assert run_cli("score", out).returncode == 0
    assert run_cli("gate", out).returncode == 1

    bundle = next(
        json.loads(line)
        for line in (out / "bundles.jsonl").read_text().splitlines()
        if json.loads(line)["trial"]["sample_id"] == "order-100"
        and json.loads(line)["trial"]["target_id"] == "buggy-release"
    )
    sha = bundle["observation"]["output"]
    edit_artifact(out, sha, lambda data: data.replace(b"1", b"2", 1))

    verified = run_cli("verify", out)
    assert verified.returncode == 4
    assert sha in verified.stdout
    for command in ("score", "gate"):
        refused = run_cli(command, out)
        assert refused.returncode == 4
        assert "does not verify" in refused.stderr
        assert "Traceback" not in refused.stderr
