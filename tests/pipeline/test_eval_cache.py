"""The response cache through ``assay.eval`` with the mock provider: a second run answers
from the cache, its evidence says so and verifies, and its scores equal the first run's;
models, base URLs and epochs never share an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from assay import Sample, Task, eval, includes
from assay.evidence import verify_run
from assay.model import GenerateConfig, MockAPI, Model, ResponseCache, default_cache_dir
from assay.pipeline import rescore_run
from tests.helpers import events_of, read_jsonl, state_of, write_module


class Counter:
    """A mock answer function that counts its calls and numbers its answers."""

    def __init__(self, text: str = "four") -> None:
        self.text = text
        self.calls = 0

    def __call__(self, messages: list[Any]) -> str:
        self.calls += 1
        return f"{self.text} #{self.calls}"


def quiz(epochs: int = 1, **config: Any) -> Task:
    return Task(
        dataset=[Sample(input=f"question {i}", target="four", id=f"s{i}") for i in range(3)],
        scorer=includes(),
        epochs=epochs,
        config=GenerateConfig(**config),
        name="quiz",
    )


QUIZ_FILE = """
import msgspec

from assay import Sample, Task, includes, task

@task
def quiz():
    return Task(
        dataset=[Sample(input=f"question {i}", target="four", id=f"s{i}") for i in range(3)],
        scorer=includes(),
    )
"""


def run(task: Task | str, model: str | Model, log_dir: Path, **options: Any) -> Path:
    (result,) = eval(task, model=model, log_dir=log_dir, cache=True, **options)
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path


def calls_of(path: Path) -> list[dict[str, Any]]:
    return [e["data"] for e in events_of(path, "sampling") if "model" in e["data"]]


def scores_of(path: Path) -> list[tuple[str, str]]:
    return [(s["trial_id"], s["status"]) for s in read_jsonl(path / "scores.jsonl")]


def test_the_second_run_answers_from_the_cache(tmp_path: Path) -> None:
    counter = Counter()
    write_module(tmp_path, "quiz", QUIZ_FILE)
    ref = f"{tmp_path / 'quiz.py'}@quiz"
    first = run(ref, "mock/x", tmp_path / "a", model_args={"outputs": counter})
    assert counter.calls == 3
    second = run(ref, "mock/x", tmp_path / "b", model_args={"outputs": counter})
    assert counter.calls == 3  # not asked again

    assert not any(c.get("cached") for c in calls_of(first))
    assert [c.get("cached") for c in calls_of(second)] == [True, True, True]
    # the same answers, the same scores; the evidence of both verifies and re-scores
    answers = [
        state_of(p, b)["output"]["message"]["content"]
        for p in (first, second)
        for b in read_jsonl(p / "bundles.jsonl")
    ]
    assert answers[:3] == answers[3:]
    assert scores_of(first) == scores_of(second)
    for path in (first, second):
        assert verify_run(path).ok
        rescored = rescore_run(path)
        assert rescored.differing == []
        # the report re-made from evidence alone has the same usage
        written = json.loads((path / "report.json").read_text())
        assert msgspec.to_builtins(rescored.report.usage_total) == written["usage_total"]
    report = read_jsonl(second / "bundles.jsonl")[0]["usage"]
    assert report["calls"] == 1 and report["cached_calls"] == 1


def test_without_the_flag_nothing_is_cached(tmp_path: Path) -> None:
    counter = Counter()
    for name in ("a", "b"):
        (result,) = eval(
            quiz(), model="mock/x", log_dir=tmp_path / name, model_args={"outputs": counter}
        )
        assert result.status == "success"
    assert counter.calls == 6
    assert list(ResponseCache().entries()) == []


def test_two_models_never_share_an_answer(tmp_path: Path) -> None:
    a, b = Counter("from a"), Counter("from b")
    run(quiz(), "mock/a", tmp_path / "a", model_args={"outputs": a})
    second = run(quiz(), "mock/b", tmp_path / "b", model_args={"outputs": b})
    assert b.calls == 3
    texts = [
        c
        for c in (
            state_of(second, x)["output"]["message"]["content"]
            for x in read_jsonl(second / "bundles.jsonl")
        )
    ]
    assert all(t.startswith("from b") for t in texts)
    assert not any(c.get("cached") for c in calls_of(second))
    assert {e.info.model for e in ResponseCache().entries() if e.info} == {"mock/a", "mock/b"}


def test_two_base_urls_never_share_an_answer(tmp_path: Path) -> None:
    counters = [Counter("one"), Counter("two")]
    for i, counter in enumerate(counters):
        api = MockAPI("x", GenerateConfig(), outputs=counter)
        api.base_url = f"http://127.0.0.1:{9000 + i}/v1"  # type: ignore[attr-defined]
        run(quiz(), Model("mock/x", api), tmp_path / str(i))
    assert [c.calls for c in counters] == [3, 3]
    assert len(list(ResponseCache().entries())) == 6


def test_each_epoch_gets_its_own_answer_when_sampling(tmp_path: Path) -> None:
    counter = Counter()
    first = run(
        quiz(epochs=3, temperature=0.7), "mock/x", tmp_path / "a", model_args={"outputs": counter}
    )
    assert counter.calls == 9
    texts = {
        state_of(first, b)["output"]["message"]["content"]
        for b in read_jsonl(first / "bundles.jsonl")
    }
    assert len(texts) == 9  # nine distinct answers, none copied between epochs
    second = run(
        quiz(epochs=3, temperature=0.7), "mock/x", tmp_path / "b", model_args={"outputs": counter}
    )
    assert counter.calls == 9
    again = {
        state_of(second, b)["output"]["message"]["content"]
        for b in read_jsonl(second / "bundles.jsonl")
    }
    assert again == texts


def test_greedy_epochs_share_one_answer(tmp_path: Path) -> None:
    counter = Counter()
    run(
        quiz(epochs=3, temperature=0),
        "mock/x",
        tmp_path,
        model_args={"outputs": counter},
        max_samples=1,
    )
    assert counter.calls == 3  # one per question; epochs 2 and 3 came from the cache


def test_an_expired_entry_is_asked_again(tmp_path: Path) -> None:
    counter = Counter()
    run(quiz(), "mock/x", tmp_path / "a", model_args={"outputs": counter}, cache_expiry=0.001)
    run(quiz(), "mock/x", tmp_path / "b", model_args={"outputs": counter})
    assert counter.calls == 6


def test_a_corrupt_entry_is_asked_again_and_replaced(tmp_path: Path) -> None:
    counter = Counter()
    run(quiz(), "mock/x", tmp_path / "a", model_args={"outputs": counter})
    entries = sorted(default_cache_dir().glob("??/*.json"))
    entries[0].write_bytes(b'{"model": "mock/x", "output": ')  # torn
    second = run(quiz(), "mock/x", tmp_path / "b", model_args={"outputs": counter})
    assert counter.calls == 4
    assert sorted(bool(c.get("cached")) for c in calls_of(second)) == [False, True, True]
    assert verify_run(second).ok


def test_a_sampling_grader_gets_an_answer_per_epoch_and_is_cached_too(tmp_path: Path) -> None:
    from assay import model_graded_qa

    graded = Counter("GRADE: C")
    grader = Model("mock/grader", MockAPI("grader", GenerateConfig(), outputs=graded))
    task = Task(
        dataset=[Sample(input=f"question {i}", target="four", id=f"s{i}") for i in range(2)],
        scorer=model_graded_qa(model=grader),
        epochs=2,
        name="graded",
    )
    one_at_a_time = {"model_args": {"default_output": "four"}, "max_samples": 1}
    first = run(task, "mock/x", tmp_path / "a", **one_at_a_time)
    assert graded.calls == 4  # the answers are the same in both epochs; the grades are not
    second = run(task, "mock/x", tmp_path / "b", **one_at_a_time)
    assert graded.calls == 4
    grades = [e["data"] for e in events_of(second, "score_sampling")]
    assert len(grades) == 4 and all(g.get("cached") for g in grades)
    assert scores_of(first) == scores_of(second)
