"""Callable targets: what a function returns or raises, classified as evidence."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import bundles_by_sample, read_jsonl, run_spec_at, simple_spec, write_module

SAMPLES = [{"id": "s0", "input": "q0", "expected": "q0"}]


def test_a_result_whose_get_completions_works_is_answered(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    source = """
class Result:
    def __init__(self, text):
        self.text = text

    def get_completions(self):
        return [self.text]


def answer(text):
    return Result(text)
"""
    write_module(folder, "completions_ok", source)
    targets = [{"id": "t", "callable": "completions_ok:answer"}]
    scorers = [{"id": "includes", "type": "includes"}]
    spec = simple_spec(folder, samples=SAMPLES, targets=targets, scorers=scorers)
    out = tmp_path / "run"
    outcome = run_spec_at(spec, out)
    assert bundles_by_sample(out)["s0"]["observation"]["outcome"] == "answered"
    assert outcome.gate.status == "passed"


def test_a_result_whose_get_completions_raises_is_a_product_failure(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    source = """
class Broken:
    def get_completions(self):
        raise ValueError("no completions")


def answer(text):
    return Broken()
"""
    write_module(folder, "completions_broken", source)
    targets = [{"id": "t", "callable": "completions_broken:answer"}]
    out = tmp_path / "run"
    outcome = run_spec_at(simple_spec(folder, samples=SAMPLES, targets=targets), out)
    bundle = bundles_by_sample(out)["s0"]
    assert bundle["observation"]["outcome"] == "product_failure"
    assert outcome.gate.status == "failed"


def test_two_spec_folders_with_same_module_name_run_their_own_code(tmp_path: Path) -> None:
    outcomes = []
    for number, body in enumerate(["return text", "return text.upper()"]):
        folder = tmp_path / f"spec{number}"
        write_module(folder, "same_name_answers", f"def answer(text):\n    {body}\n")
        targets = [{"id": "t", "callable": "same_name_answers:answer"}]
        spec = simple_spec(folder, samples=SAMPLES, targets=targets)
        outcomes.append(run_spec_at(spec, tmp_path / f"run{number}"))
    assert outcomes[0].gate.status == "passed"
    statuses = [s["status"] for s in read_jsonl(tmp_path / "run1" / "scores.jsonl")]
    assert statuses == ["failed"], "the second spec ran the first spec's function"
