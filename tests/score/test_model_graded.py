"""Model-graded scorers against the real mock provider standing in for the grader."""

from __future__ import annotations

from typing import Any

import pytest

from assay.model import ChatMessage, get_model
from assay.score import (
    CORRECT,
    INCORRECT,
    PARTIAL,
    model_graded_fact,
    model_graded_qa,
    value_to_float,
)
from tests.score.states import judge, make_state


def grader(reply: Any) -> tuple[Any, list[str]]:
    """A mock grader model answering ``reply(prompt)``, and the prompts it was sent."""
    prompts: list[str] = []

    def answer(messages: list[ChatMessage]) -> str:
        prompts.append(messages[-1].content)
        return str(reply(messages[-1].content))

    return get_model("mock/grader", outputs=answer), prompts


def submission(prompt: str) -> str:
    return prompt.split("[Submission]: ")[1].split("\n")[0]


def test_model_graded_qa_asks_the_grader_and_reads_its_grade() -> None:
    model, prompts = grader(lambda p: "GRADE: C" if "Paris" in submission(p) else "GRADE: I")
    scorer = model_graded_qa(model=model)
    good = judge(scorer, make_state("It is Paris", "names Paris", input="Capital of France?"))
    assert (good.value, good.answer, good.explanation) == (CORRECT, "It is Paris", "GRADE: C")
    assert judge(scorer, make_state("It is Lyon", "names Paris")).value == INCORRECT
    prompt = prompts[0]
    assert "[Task]: Capital of France?" in prompt
    assert "[Criterion]: names Paris" in prompt
    assert "one of CI." in prompt and '"P"' not in prompt


def test_model_graded_fact_uses_the_expert_template() -> None:
    model, prompts = grader(lambda p: "The facts agree.\nGRADE: C")
    score = judge(model_graded_fact(model=model), make_state("Paris", "Paris is the capital"))
    assert score.value == CORRECT
    assert "[Expert]: Paris is the capital" in prompts[0]
    assert "[Submission]: Paris" in prompts[0]


def test_the_last_grade_wins_and_grades_are_read_leniently() -> None:
    model, _ = grader(lambda p: "Not 'GRADE: I' since the answer is right.\ngrade : c")
    assert judge(model_graded_qa(model=model), make_state("x", "y")).value == CORRECT


def test_partial_credit_is_offered_only_when_asked_for_but_a_p_grade_is_always_half() -> None:
    """As Inspect: ``partial_credit`` changes what the grader is told, not how its grade
    is read, so a ``P`` the grader gives anyway is 0.5 (it used to become incorrect)."""
    model, prompts = grader(lambda p: "GRADE: P")
    partial = judge(model_graded_qa(model=model, partial_credit=True), make_state("x", "y"))
    assert partial.value == PARTIAL and value_to_float(partial.value) == 0.5
    assert "one of CPI." in prompts[0] and '"P" for partially correct' in prompts[0]
    unoffered = judge(model_graded_qa(model=model), make_state("x", "y"))
    assert "one of CI." in prompts[1]
    assert unoffered.value == PARTIAL and value_to_float(unoffered.value) == 0.5


def test_a_reply_without_a_grade_is_incorrect_with_the_reply_shown() -> None:
    model, _ = grader(lambda p: "I cannot decide")
    score = judge(model_graded_qa(model=model), make_state("x", "y"))
    assert (score.value, score.explanation) == (INCORRECT, "no grade found: I cannot decide")


def test_the_grader_defaults_to_the_state_model() -> None:
    # mock/x answers its default text, which has no grade.
    score = judge(model_graded_qa(), make_state("x", "y"))
    assert score.value == INCORRECT
    assert score.explanation == "no grade found: Default output from the mock model"


def test_custom_template_instructions_and_pattern() -> None:
    model, prompts = grader(lambda p: "VERDICT=correct")
    scorer = model_graded_qa(
        template="{subject}: {question} / {answer} / {criterion} / {instructions}",
        instructions="Say VERDICT=correct or VERDICT=wrong.",
        grade_pattern=r"VERDICT=(c)orrect",
        model=model,
    )
    state = make_state("4", "4", input="2+2?", metadata={"subject": "maths"})
    assert judge(scorer, state).value == CORRECT
    assert prompts == ["maths: 2+2? / 4 / 4 / Say VERDICT=correct or VERDICT=wrong."]


def test_template_and_pattern_mistakes_are_explained() -> None:
    model, _ = grader(lambda p: "GRADE: C")
    with pytest.raises(ValueError, match=r"'subject'.*metadata key"):
        judge(model_graded_qa(template="{subject}", model=model), make_state("x", "y"))
    with pytest.raises(ValueError, match="needs a group"):
        model_graded_qa(grade_pattern="GRADE: C")
