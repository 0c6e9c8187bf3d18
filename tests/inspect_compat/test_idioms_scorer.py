"""Held-out Inspect idioms, scorers: each test is written as Inspect's documentation
shows it, with ``inspect_ai`` changed to ``assay``; the model is Inspect's ``mockllm``."""

from __future__ import annotations

from assay import Epochs, Task, eval
from assay.dataset import Sample
from assay.model import ModelOutput, get_model
from assay.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    answer,
    exact,
    f1,
    includes,
    match,
    mean,
    metric,
    model_graded_fact,
    model_graded_qa,
    pattern,
    scorer,
    std,
    stderr,
)
from assay.solver import TaskState, generate
from tests.inspect_compat._mock import mockllm


def score_of(task: Task, *answers: str, **options) -> float:
    log = eval(task, model=mockllm(*answers), **options)[0]
    assert log.status == "success", log
    return log.results.scores[0].metrics[next(iter(log.results.scores[0].metrics))].value


def one(target: str | list[str], scorer, input: str = "Q") -> Task:
    return Task(dataset=[Sample(input=input, target=target)], solver=generate(), scorer=scorer)


def test_match_end_numeric() -> None:
    assert score_of(one("42", match(location="end", numeric=True)), "The answer is 42.0") == 1.0


def test_match_begin() -> None:
    assert score_of(one("Paris", match(location="begin")), "Paris is the capital.") == 1.0


def test_match_any_ignore_case() -> None:
    assert score_of(one("paris", match(location="any", ignore_case=True)), "I think PARIS.") == 1.0


def test_includes() -> None:
    assert score_of(one("Paris", includes()), "It is Paris, of course") == 1.0


def test_includes_with_a_list_target() -> None:
    assert score_of(one(["Paris", "paris"], includes(ignore_case=False)), "paris") == 1.0


def test_pattern() -> None:
    assert score_of(one("B", pattern(r"ANSWER:\s*([A-D])")), "ANSWER: B") == 1.0


def test_answer_letter() -> None:
    assert score_of(one("C", answer("letter")), "ANSWER: C") == 1.0


def test_answer_line() -> None:
    assert score_of(one("blue", answer("line")), "Reasoning here.\nANSWER: blue") == 1.0


def test_exact() -> None:
    assert score_of(one("Paris", exact()), "  Paris ") == 1.0


def test_f1() -> None:
    value = score_of(one("the cat sat", f1()), "the cat")
    assert 0.7 < value < 0.9


def test_model_graded_fact() -> None:
    task = one("Paris", model_graded_fact(), input="Capital of France?")
    assert score_of(task, "Paris", "The answer matches. GRADE: C") == 1.0


def test_model_graded_qa_partial_credit() -> None:
    task = one("Paris", model_graded_qa(partial_credit=True), input="Capital of France?")
    assert score_of(task, "Paris-ish", "GRADE: P") == 0.5


def test_model_graded_qa_custom_instructions() -> None:
    grader = model_graded_qa(
        instructions="Grade strictly. End with GRADE: C or GRADE: I.",
        grade_pattern=r"GRADE:\s*([CI])",
    )
    assert score_of(one("4", grader, input="2+2?"), "4", "GRADE: I") == 0.0


def test_model_graded_qa_with_grader_model() -> None:
    grader = model_graded_qa(model=mockllm("GRADE: C"))
    assert score_of(one("4", grader, input="2+2?"), "4") == 1.0


def test_custom_scorer_with_accuracy_stderr() -> None:
    @scorer(metrics=[accuracy(), stderr()])
    def check():
        async def score(state: TaskState, target: Target) -> Score:
            answer = state.output.completion
            return Score(
                value=CORRECT if answer == target.text else INCORRECT,
                answer=answer,
                explanation="compared exactly",
            )

        return score

    log = eval(one("yes", check()), model=mockllm("yes"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert "stderr" in log.results.scores[0].metrics


def test_custom_scorer_numeric_with_mean() -> None:
    @scorer(metrics=[mean(), std()])
    def length():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=len(state.output.completion))

        return score

    assert score_of(one("x", length()), "abcd") == 4.0


def test_scorer_reads_metadata_and_target() -> None:
    @scorer(metrics=[accuracy()])
    def by_metadata():
        async def score(state: TaskState, target: Target) -> Score:
            expected = state.metadata["expected"]
            return Score(value=CORRECT if expected in state.output.completion else INCORRECT)

        return score

    task = Task(dataset=[Sample(input="Q", metadata={"expected": "ok"})], scorer=by_metadata())
    assert score_of(task, "it is ok") == 1.0


def test_score_metadata() -> None:
    @scorer(metrics=[accuracy()])
    def with_metadata():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=CORRECT, metadata={"length": len(state.output.completion)})

        return score

    log = eval(one("x", with_metadata()), model=mockllm("abc"))[0]
    assert log.samples[0].scores["with_metadata"].metadata == {"length": 3}


def test_custom_metric() -> None:
    @metric
    def proportion_correct() -> Metric:
        def metric(scores: list[SampleScore]) -> float:
            return sum(score.score.as_float() for score in scores) / len(scores)

        return metric

    @scorer(metrics=[proportion_correct()])
    def check():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=CORRECT if target.text in state.output.completion else INCORRECT)

        return score

    log = eval(one("a", check()), model=mockllm("a"))[0]
    assert log.results.scores[0].metrics["proportion_correct"].value == 1.0


def test_dict_valued_score_with_metrics_dict() -> None:
    @scorer(metrics={"correct": [mean()], "short": [mean()]})
    def two():
        async def score(state: TaskState, target: Target) -> Score:
            text = state.output.completion
            return Score(value={"correct": int(text == target.text), "short": int(len(text) < 5)})

        return score

    log = eval(one("a", two()), model=mockllm("a"))[0]
    scores = {score.name: score.metrics["mean"].value for score in log.results.scores}
    assert scores == {"correct": 1.0, "short": 1.0}


def test_multiple_scorers_on_a_task() -> None:
    task = Task(dataset=[Sample(input="Q", target="Paris")], scorer=[match(), includes()])
    log = eval(task, model=mockllm("Paris"))[0]
    assert len(log.results.scores) == 2


def test_epochs_with_reducer() -> None:
    task = Task(
        dataset=[Sample(input="Q", target="A")],
        scorer=includes(),
        epochs=Epochs(3, "mean"),
    )
    log = eval(task, model=mockllm("A", "B", "A"))[0]
    assert abs(log.results.scores[0].metrics["accuracy"].value - 2 / 3) < 1e-9


def test_epochs_on_eval() -> None:
    log = eval(one("A", includes()), model=mockllm("A", "A"), epochs=2)[0]
    assert len(log.samples) == 2


def test_score_reducer() -> None:
    from assay.scorer import score_reducer

    @score_reducer(name="best")
    def best():
        def reduce(scores: list[Score]) -> Score:
            return Score(value=max(s.as_float() for s in scores))

        return reduce

    task = Task(
        dataset=[Sample(input="Q", target="A")], scorer=includes(), epochs=Epochs(2, best())
    )
    log = eval(task, model=mockllm("B", "A"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_multi_scorer_majority() -> None:
    from assay.scorer import multi_scorer

    task = one("Paris", multi_scorer([includes(), match(), exact()], "mode"))
    assert score_of(task, "Paris") == 1.0


def test_grouped_metric() -> None:
    from assay.scorer import grouped

    @scorer(metrics=[grouped(accuracy(), "category")])
    def check():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=CORRECT if target.text in state.output.completion else INCORRECT)

        return score

    task = Task(
        dataset=[
            Sample(input="Q1", target="a", metadata={"category": "x"}),
            Sample(input="Q2", target="b", metadata={"category": "y"}),
        ],
        scorer=check(),
    )
    log = eval(task, model=mockllm("a", "a"))[0]
    metrics = log.results.scores[0].metrics
    assert metrics["x"].value == 1.0 and metrics["y"].value == 0.0


def test_score_value_helpers() -> None:
    from assay.scorer import value_to_float

    to_float = value_to_float()
    assert to_float(CORRECT) == 1.0 and to_float(INCORRECT) == 0.0
    assert Score(value="C").as_float() == 1.0 and Score(value=3).as_int() == 3


def test_target_text_and_list() -> None:
    target = Target(["a", "b"])
    assert target.text == "ab" and target.target == ["a", "b"] and list(target) == ["a", "b"]


def test_bootstrap_stderr_metric() -> None:
    from assay.scorer import bootstrap_stderr

    @scorer(metrics=[accuracy(), bootstrap_stderr(num_samples=100)])
    def check():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=CORRECT)

        return score

    log = eval(one("a", check()), model=mockllm("a"))[0]
    assert "bootstrap_stderr" in log.results.scores[0].metrics


def test_model_graded_qa_include_history() -> None:
    from assay.solver import user_message

    seen = []

    def grader_reply(input, tools, tool_choice, config) -> ModelOutput:
        seen.append(input[-1].text)
        return ModelOutput.from_content(model="mockllm/model", content="GRADE: C")

    task = Task(
        dataset=[Sample(input="First question", target="x")],
        solver=[generate(), user_message("A follow-up"), generate()],
        scorer=model_graded_qa(
            include_history=True, model=get_model("mockllm/model", custom_outputs=grader_reply)
        ),
    )
    log = eval(task, model=mockllm("one", "two"))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert "First question" in seen[0] and "Assistant: one" in seen[0]
    assert "User: A follow-up" in seen[0]
