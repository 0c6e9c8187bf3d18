"""Scoring written as Inspect documents it, run on assay: a custom ``@metric`` reading
``SampleScore.score`` / ``.sample_id`` / ``.sample_metadata`` through ``value_to_float()``,
a custom ``@score_reducer`` (by name and by object, and again in ``assay score``),
``multi_scorer`` and ``answer``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import Epochs, Sample, Task, eval
from assay.errors import EXIT_PASSED
from assay.model import ChatMessage, get_model
from assay.scorer import (
    CORRECT,
    INCORRECT,
    PARTIAL,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    answer,
    at_least,
    exact,
    includes,
    match,
    max_score,
    mean_score,
    median_score,
    metric,
    mode_score,
    multi_scorer,
    pass_at,
    score_reducer,
    scorer,
    value_to_float,
)
from assay.solver import TaskState
from tests.helpers import read_jsonl, run_cli, run_dirs, write_module
from tests.score.states import judge, make_state


@metric
def hard_accuracy() -> Metric:
    """Accuracy over the samples whose metadata says ``level: hard``."""

    def compute(scores: list[SampleScore]) -> float:
        to_float = value_to_float()
        hard = [s for s in scores if s.sample_metadata.get("level") == "hard"]
        return sum(to_float(s.score.value) for s in hard) / len(hard)

    return compute


@metric
def first_right_id() -> Metric:
    """The number in the id of the first sample answered right (ids are ``q<n>``)."""

    def compute(scores: list[SampleScore]) -> float:
        right = [s for s in scores if s.score.as_float() == 1.0]
        return float(right[0].sample_id[1:]) if right else -1.0

    return compute


def echo_model() -> object:
    """Answers with the last word of the question."""

    def reply(messages: list[ChatMessage]) -> str:
        return messages[-1].content.split()[-1]

    return get_model("mock/echo", outputs=reply)


def test_a_custom_metric_in_inspect_style_reads_score_id_and_metadata(tmp_path: Path) -> None:
    samples = [
        Sample(input="say a", target="a", id="q1", metadata={"level": "easy"}),
        Sample(input="say b", target="x", id="q2", metadata={"level": "hard"}),
        Sample(input="say c", target="c", id="q3", metadata={"level": "hard"}),
    ]
    task = Task(dataset=samples, scorer=exact(), metrics=[hard_accuracy(), first_right_id()])
    (result,) = eval(task, model=echo_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    values = result.task_metrics[result.model]["exact"]
    assert values == {"hard_accuracy": 0.5, "first_right_id": 1.0}


@score_reducer(name="all_right")
def all_right() -> object:
    """1 only when every epoch was right (Inspect's ``list[Score] -> Score`` form)."""

    def reduce(scores: list[Score]) -> Score:
        return Score(value=CORRECT if all(s.as_float() == 1.0 for s in scores) else INCORRECT)

    return reduce


def flaky_model() -> object:
    """Right on every call but a sample's second (whatever order the epochs run in)."""
    calls: dict[str, int] = {}

    def reply(messages: list[ChatMessage]) -> str:
        word = messages[-1].content.split()[-1]
        calls[word] = calls.get(word, 0) + 1
        return "wrong" if calls[word] == 2 else word

    return get_model("mock/flaky", outputs=reply)


@pytest.mark.parametrize("reducer", [all_right(), "all_right"])
def test_a_custom_score_reducer_folds_each_sample_s_epochs(tmp_path: Path, reducer: object) -> None:
    samples = [Sample(input="say a", target="a", id="q1")]
    task = Task(dataset=samples, scorer=exact(), epochs=Epochs(3, ["mean", reducer]))
    (result,) = eval(task, model=flaky_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    values = result.task_metrics[result.model]["exact"]
    assert values["accuracy"] == pytest.approx(2 / 3)
    assert values["all_right/accuracy"] == 0.0


SEEN_BY_REDUCER: list[list[Score]] = []


@score_reducer(name="answers_agree")
def answers_agree() -> object:
    """1 when every epoch gave the same answer: it reads each epoch's whole Score."""

    def reduce(scores: list[Score]) -> Score:
        SEEN_BY_REDUCER.append(scores)
        return Score(value=CORRECT if len({s.answer for s in scores}) == 1 else INCORRECT)

    return reduce


@scorer(metrics=[accuracy()])
def said() -> object:
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        right = answer == target.text
        return Score(
            value=CORRECT if right else INCORRECT,
            answer=answer,
            explanation=f"said {answer}",
            metadata={"length": len(answer)},
        )

    return score


def test_a_score_reducer_gets_each_epoch_s_whole_score(tmp_path: Path) -> None:
    SEEN_BY_REDUCER.clear()
    samples = [Sample(input="say a", target="a", id="q1")]
    task = Task(dataset=samples, scorer=said(), epochs=Epochs(3, ["mean", answers_agree()]))
    (result,) = eval(task, model=flaky_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.task_metrics[result.model]["said"]["answers_agree/accuracy"] == 0.0
    (scores,) = SEEN_BY_REDUCER
    assert all(isinstance(s, Score) for s in scores)
    assert sorted((s.answer, s.explanation, s.as_float()) for s in scores) == [
        ("a", "said a", 1.0),
        ("a", "said a", 1.0),
        ("wrong", "said wrong", 0.0),
    ]
    assert sorted(s.metadata["length"] for s in scores if s.metadata) == [1, 1, 5]


REDUCED_TASK = """
from assay import Epochs, Sample, Task, task
from assay.scorer import CORRECT, INCORRECT, Score, exact, score_reducer


@score_reducer
def any_right():
    def reduce(scores):
        return Score(value=CORRECT if any(s.as_float() == 1.0 for s in scores) else INCORRECT)

    return reduce


@task
def reduced():
    samples = [Sample(input="say a", target="a"), Sample(input="say b", target="zz")]
    return Task(dataset=samples, scorer=exact(), epochs=Epochs(2, any_right()), model="mock/m")
"""


def test_assay_score_finds_the_custom_reducer_again_in_the_task_file(tmp_path: Path) -> None:
    write_module(tmp_path, "reduced", REDUCED_TASK)
    ran = run_cli("run", "reduced.py@reduced", "-M", "default_output=a", cwd=tmp_path)
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr
    assert "exact: any_right/accuracy 0.5000" in ran.stdout
    (run,) = run_dirs(tmp_path / "runs")
    rescored = run_cli("score", run, cwd=tmp_path)
    assert rescored.returncode == EXIT_PASSED, rescored.stdout + rescored.stderr


def test_multi_scorer_folds_several_scorers_with_a_named_reducer() -> None:
    panel = multi_scorer([includes(), exact(), match()], "mode")
    state = make_state("The answer is Paris", "Paris")
    score = judge(panel, state)  # includes: C, exact: I, match: C
    assert score.value == 1.0
    assert score.explanation is not None and score.explanation.count("\n") == 2
    strict = judge(multi_scorer([includes(), exact()], "at_least_2"), state)
    assert strict.value == 0.0


def test_multi_scorer_takes_a_score_reducer_function() -> None:
    def halves(scores: list[Score]) -> Score:
        right = sum(s.as_float() for s in scores)
        return Score(value=PARTIAL if 0 < right < len(scores) else scores[0].value)

    score = judge(multi_scorer([includes(), exact()], halves), make_state("It is Paris", "Paris"))
    assert score.value == PARTIAL


def test_multi_scorer_in_a_task_runs_and_records_one_score(tmp_path: Path) -> None:
    samples = [Sample(input="say a", target="a", id="q1"), Sample(input="say b", target="z")]
    task = Task(dataset=samples, scorer=multi_scorer([exact(), includes()], "mean"))
    (result,) = eval(task, model=echo_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.task_metrics[result.model]["multi_scorer"]["accuracy"] == 0.5


@pytest.mark.parametrize(
    ("pattern", "completion", "target", "expected"),
    [
        ("letter", "Thinking...\nANSWER: b", "B", CORRECT),
        ("letter", "ANSWER: C", "B", INCORRECT),
        ("word", "answer: no. ANSWER: Paris is it", "paris", CORRECT),
        ("line", "ANSWER: New York City\nthanks", "new york city", CORRECT),
        ("line", "I think New York City", "New York City", INCORRECT),
    ],
)
def test_answer_reads_what_follows_the_last_answer_marker(
    pattern: str, completion: str, target: str, expected: str
) -> None:
    score = judge(answer(pattern), make_state(completion, target))  # type: ignore[arg-type]
    assert score.value == expected


def test_answer_refuses_an_unknown_pattern() -> None:
    with pytest.raises(ValueError, match="'letter', 'word' or 'line'"):
        answer("sentence")  # type: ignore[arg-type]


DICT_SCORES = """
from assay import Sample, Task, task
from assay.scorer import Score, mean, scorer, stderr


@scorer(metrics={"correct": [mean(), stderr()], "concise": [mean()]})
def answer_quality(max_words: int = 2):
    async def score(state, target):
        completion = state.output.completion
        correct = 1 if target.text.lower() in completion.lower() else 0
        concise = 1 if len(completion.split()) <= max_words else 0
        return Score(value={"correct": correct, "concise": concise}, answer=completion)

    return score


@scorer(metrics=[mean()])
def as_list():
    async def score(state, target):
        return Score(value=[1.0, 0.5 if target.text == "a" else 0.0])

    return score


@task
def quality():
    samples = [
        Sample(input="say a", target="a", id="q1"),
        Sample(input="say the long answer", target="answer", id="q2"),
        Sample(input="say b", target="z", id="q3"),
    ]
    return Task(dataset=samples, scorer=[answer_quality(), as_list()], model="mock/m")
"""


def test_dict_and_list_scores_get_metrics_key_by_key_and_rescore_equal(tmp_path: Path) -> None:
    """Inspect's multiple-scores idiom: ``metrics={key: [...]}`` on ``@scorer``, a dict
    value per sample; a list value with a list of metrics gets them per position."""
    write_module(tmp_path, "quality", DICT_SCORES)
    echo = "default_output=ignored"
    ran = run_cli("run", "quality.py@quality", "-M", echo, "-m", "mock/m", cwd=tmp_path)
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr
    (run,) = run_dirs(tmp_path / "runs")
    report = json.loads((run / "report.json").read_text())
    (measured,) = report["task_metrics"].values()
    assert measured["answer_quality"]["correct/mean"] == 0.0  # "ignored" answers nothing
    assert measured["answer_quality"]["concise/mean"] == 1.0
    assert "correct/stderr" in measured["answer_quality"]
    assert measured["as_list"] == {"0/mean": 1.0, "1/mean": pytest.approx(0.5 / 3)}
    records = [r for r in read_jsonl(run / "scores.jsonl") if r["scorer_id"] == "answer_quality"]
    assert {r["status"] for r in records} == {"failed"}  # passed only when every key is 1
    assert all(r["values"] == {"correct": 0.0, "concise": 1.0} for r in records)
    rescored = run_cli("score", run, cwd=tmp_path)
    assert rescored.returncode == EXIT_PASSED, rescored.stdout + rescored.stderr


def test_a_dict_score_passes_when_every_value_is_one(tmp_path: Path) -> None:
    @scorer(metrics={"*": [accuracy()]})
    def both() -> object:
        async def score(state: object, target: object) -> Score:
            return Score(value={"right": CORRECT, "polite": True})

        return score

    task = Task(dataset=[Sample(input="say a", target="a")], scorer=both())
    (result,) = eval(task, model=echo_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.task_metrics[result.model]["both"] == {
        "right/accuracy": 1.0,
        "polite/accuracy": 1.0,
    }
    (record,) = read_jsonl(result.path / "scores.jsonl")
    assert (record["status"], record["value"]) == ("passed", 1.0)


def test_a_dict_score_holding_a_dict_is_a_scorer_error(tmp_path: Path) -> None:
    @scorer(metrics=[accuracy()])
    def nested() -> object:
        async def score(state: object, target: object) -> Score:
            return Score(value={"a": {"b": 1}})  # type: ignore[dict-item]

        return score

    task = Task(dataset=[Sample(input="say a", target="a")], scorer=nested())
    (result,) = eval(task, model=echo_model(), log_dir=tmp_path)
    assert result.status == "error"
    assert result.error is not None and "invalid Score value {'b': 1}" in result.error


def test_inspect_s_reducer_functions_are_recorded_by_their_names(tmp_path: Path) -> None:
    reducers = [mean_score(), pass_at(2), at_least(3), max_score(), mode_score(), median_score()]
    samples = [Sample(input="say a", target="a", id="q1")]
    task = Task(dataset=samples, scorer=exact(), epochs=Epochs(3, reducers))
    (result,) = eval(task, model=flaky_model(), log_dir=tmp_path)
    assert result.status == "success", result.error
    spec = json.loads((result.path / "spec.json").read_text())
    names = ["mean", "pass_at_2", "at_least_3", "max", "mode", "median"]
    assert spec["epochs_reducer"] == names
    measured = result.task_metrics[result.model]["exact"]
    values = {k: v for k, v in measured.items() if "stderr" not in k}
    assert values == {  # epochs right, wrong, right
        "accuracy": pytest.approx(2 / 3),
        "pass_at_2/accuracy": 1.0,
        "at_least_3/accuracy": 0.0,
        "max/accuracy": 1.0,
        "mode/accuracy": 1.0,
        "median/accuracy": 1.0,
    }
