"""Invariant 3: only infrastructure failures are retried; a product result ends the trial.

Real callables (modules written to tmp_path) and real subprocesses; the bundle on disk is
what is checked, since it is what an auditor sees.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import verify_run
from tests.helpers import (
    FAST_RETRY,
    bundles_by_sample,
    run_spec_at,
    simple_spec,
    trial_events,
    unique_callable_spec,
    write_module,
)

SAMPLES = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(3)]


def attempt_statuses(bundle: dict[str, Any]) -> list[str]:
    return [a["status"] for a in bundle["attempts"]]


def counter_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
)
def test_connection_errors_are_retried_until_an_answer(tmp_path: Path) -> None:
    source = """
calls = {}


def answer(text):
    calls[text] = calls.get(text, 0) + 1
    if calls[text] <= 2:
        raise ConnectionError("connection refused")
    return text
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, retry=FAST_RETRY)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    assert outcome.gate.status == "passed"
    for sample_id, bundle in bundles_by_sample(out).items():
        assert bundle["state"] == "completed", sample_id
        assert attempt_statuses(bundle) == ["infra_failed", "infra_failed", "succeeded"]
        assert [a["reason"] for a in bundle["attempts"][:2]] == ["connection", "connection"]
        assert bundle["canonical_attempt"]["attempt"] == 3
        assert bundle["observation"]["outcome"] == "answered"
    errors = [e for events in trial_events(out).values() for e in events if e["type"] == "error"]
    assert len(errors) == 6 and all(e["data"]["kind"] == "infrastructure" for e in errors)
    assert verify_run(out).ok


@pytest.mark.doc(
    "docs/evidence.md",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
)
def test_infrastructure_failures_past_the_budget_block_the_trial(tmp_path: Path) -> None:
    source = """
def answer(text):
    if text == "q1":
        raise TimeoutError("upstream timed out")
    return text
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, retry=FAST_RETRY)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s1"]
    assert bundle["state"] == "blocked"
    assert attempt_statuses(bundle) == ["infra_failed"] * 3
    assert bundle["canonical_attempt"] is None
    assert outcome.gate.status == "inconclusive"


@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
)
def test_a_wrong_answer_is_never_retried(tmp_path: Path) -> None:
    source = """
calls = {}


def answer(text):
    calls[text] = calls.get(text, 0) + 1
    return "wrong"
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, retry=FAST_RETRY)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    module = sys.modules[_module_of(spec)]
    assert module.calls == {"q0": 1, "q1": 1, "q2": 1}
    for bundle in bundles_by_sample(out).values():
        assert bundle["state"] == "completed"
        assert attempt_statuses(bundle) == ["succeeded"]
    assert outcome.metrics.estimate("t", "exact").statuses["failed"] == 3
    assert outcome.gate.status == "failed"


def test_a_raising_callable_is_a_product_failure(tmp_path: Path) -> None:
    source = """
calls = []


def answer(text):
    calls.append(text)
    raise ValueError("the model produced garbage")
"""
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES, retry=FAST_RETRY)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    assert sorted(sys.modules[_module_of(spec)].calls) == ["q0", "q1", "q2"]
    for bundle in bundles_by_sample(out).values():
        assert bundle["state"] == "completed"
        assert attempt_statuses(bundle) == ["succeeded"]
        assert bundle["observation"]["outcome"] == "product_failure"
        assert "ValueError" in bundle["observation"]["failure"]
    estimate = outcome.metrics.estimate("t", "exact")
    assert (estimate.statuses["failed"], estimate.passed) == (3, 0)
    assert outcome.gate.status == "failed"  # a product failure is a verdict, not a doubt


# --------------------------------------------------------------------------- subprocess

SCRIPT_HEAD = """
import json
import sys
from pathlib import Path

Path(sys.argv[1]).open("a").write("called\\n")
sample = json.load(sys.stdin)
"""


def subprocess_spec(folder: Path, body: str, **target: Any) -> tuple[Path, Path]:
    """A spec with one subprocess target running SCRIPT_HEAD + *body*; returns (spec, counter)."""
    write_module(folder, "program", SCRIPT_HEAD + body)
    counter = folder / "calls.txt"
    targets = [{"id": "t", "script": "program.py", "args": [str(counter)], **target}]
    return simple_spec(folder, samples=SAMPLES[:1], targets=targets, retry=FAST_RETRY), counter


def test_a_nonzero_exit_is_a_product_failure_not_retried(tmp_path: Path) -> None:
    body = 'print(json.dumps(sample["input"]))\nsys.exit(3)\n'
    spec, counter = subprocess_spec(tmp_path / "spec", body)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s0"]
    assert counter_lines(counter) == ["called"]
    assert attempt_statuses(bundle) == ["succeeded"]
    assert bundle["observation"]["outcome"] == "product_failure"
    assert "code 3" in bundle["observation"]["failure"]
    assert outcome.gate.status == "failed"


def test_non_json_output_is_a_product_failure_not_retried(tmp_path: Path) -> None:
    spec, counter = subprocess_spec(tmp_path / "spec", 'print("fee: zero")\n')
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s0"]
    assert counter_lines(counter) == ["called"]
    assert attempt_statuses(bundle) == ["succeeded"]
    assert bundle["observation"]["outcome"] == "product_failure"
    assert "not JSON" in bundle["observation"]["failure"]
    assert outcome.gate.status == "failed"


@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
    "Trial: `completed` (its canonical attempt is the first that succeeded, or its last errored "
    "one),",
)
def test_a_timeout_is_retried_then_blocks_and_the_gate_is_inconclusive(tmp_path: Path) -> None:
    body = "import time\ntime.sleep(30)\n"
    spec, counter = subprocess_spec(tmp_path / "spec", body, timeout=0.3)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s0"]
    # A program killed by its timeout may not have got as far as writing its line (a
    # busy machine starts Python slowly): the attempts are read from the evidence, and
    # the counter only shows no call was made beyond them.
    assert counter_lines(counter) == ["called"] * len(counter_lines(counter))
    assert len(counter_lines(counter)) <= FAST_RETRY["max_attempts"]
    assert attempt_statuses(bundle) == ["infra_failed"] * FAST_RETRY["max_attempts"]
    assert {a["reason"] for a in bundle["attempts"]} == {"timeout"}
    assert bundle["state"] == "blocked"
    assert outcome.gate.status == "inconclusive"
    assert any("blocked" in reason for reason in outcome.gate.reasons)
    assert verify_run(out).ok


@pytest.mark.doc(
    "docs/evidence.md",
    "Attempt: `succeeded` (a product result, right or wrong), `errored` (a Python task's",
)
def test_a_missing_executable_is_an_infrastructure_failure(tmp_path: Path) -> None:
    targets = [{"id": "t", "argv": ["/nonexistent/assay-test-program"]}]
    spec = simple_spec(tmp_path / "spec", samples=SAMPLES[:1], targets=targets, retry=FAST_RETRY)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s0"]
    assert attempt_statuses(bundle) == ["infra_failed"] * FAST_RETRY["max_attempts"]
    assert {a["reason"] for a in bundle["attempts"]} == {"failed_to_start"}
    assert bundle["state"] == "blocked"
    assert outcome.gate.status == "inconclusive"


def test_an_output_flood_is_a_product_failure(tmp_path: Path) -> None:
    body = 'sys.stdout.write("[" + "1," * 100_000 + "1]")\n'
    spec, counter = subprocess_spec(tmp_path / "spec", body, max_output_bytes=1000)
    out = tmp_path / "run"
    run_spec_at(spec, out)
    bundle = bundles_by_sample(out)["s0"]
    assert counter_lines(counter) == ["called"]
    assert bundle["observation"]["outcome"] == "product_failure"
    assert "exceeded" in bundle["observation"]["failure"]


def _module_of(spec: Path) -> str:
    """The ``sys.modules`` key of the target module ``unique_callable_spec`` wrote for *spec*.

    assay loads a spec folder's module under a name unique to its file, ending in the
    module's own name.
    """
    (stem,) = [p.stem for p in spec.parent.glob("mod_*.py")]
    (key,) = [name for name in sys.modules if name.endswith(f".{stem}")]
    return key
