"""The Python scorer library: each scorer on hand-built states, as Inspect AI users expect."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

import assay.score
from assay._registry import lookup, registry_info
from assay.model import ChatMessage, get_model
from assay.score import (
    CORRECT,
    INCORRECT,
    PythonScorer,
    Score,
    choice,
    exact,
    f1,
    includes,
    match,
    pattern,
    scorer_metrics,
)
from assay.solver import Target, TaskState, multiple_choice
from tests.score.states import judge, make_state, value

# --- registration -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "metrics"),
    [
        ("match", ["accuracy", "stderr"]),
        ("includes", ["accuracy", "stderr"]),
        ("pattern", ["accuracy", "stderr"]),
        ("exact", ["accuracy", "stderr"]),
        ("f1", ["mean", "stderr"]),
        ("choice", ["accuracy", "stderr"]),
        ("model_graded_qa", ["accuracy", "stderr"]),
        ("model_graded_fact", ["accuracy", "stderr"]),
    ],
)
def test_scorers_are_registered_with_their_default_metrics(name: str, metrics: list[str]) -> None:
    factory = lookup("scorer", name)
    assert factory is not None
    args = {"pattern": "(x)"} if name == "pattern" else {}
    product = getattr(assay.score, name)(**args)
    info = registry_info(product)
    assert info is not None and (info.kind, info.name) == ("scorer", name)
    declared = [registry_info(m) for m in scorer_metrics(product)]
    assert [i.name for i in declared if i is not None] == metrics


def test_a_scorer_rebuilt_by_name_keeps_its_metrics() -> None:
    factory = lookup("scorer", "match")
    assert factory is not None
    assert len(scorer_metrics(factory())) == 2


def test_registry_records_the_arguments() -> None:
    info = registry_info(match("begin", numeric=True))
    assert info is not None
    assert info.args == {"location": "begin", "ignore_case": True, "numeric": True}


# --- match ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "completion", "target", "expected"),
    [
        ("end", "The answer is Paris.", "paris", CORRECT),
        ("end", "Paris is the answer", "Paris", INCORRECT),
        ("begin", "Paris is the answer", "paris", CORRECT),
        ("begin", "The answer is Paris", "Paris", INCORRECT),
        ("any", "I think Paris, yes", "Paris", CORRECT),
        ("any", "I think Lyon", "Paris", INCORRECT),
        ("exact", "  Paris! ", "paris", CORRECT),
        ("exact", "Paris France", "Paris", INCORRECT),
    ],
)
def test_match_locations(location: Any, completion: str, target: str, expected: str) -> None:
    assert value(match(location), completion, target) == expected


def test_match_case_sensitivity_can_be_turned_on() -> None:
    assert value(match(ignore_case=False), "answer: paris", "Paris") == INCORRECT
    assert value(match(ignore_case=False), "answer: Paris", "Paris") == CORRECT


def test_match_tries_every_target_value() -> None:
    assert value(match(), "it is NYC", ["New York", "NYC"]) == CORRECT


@pytest.mark.parametrize(
    ("location", "completion", "target", "expected", "answer"),
    [
        ("end", "First 3 apples, then $1,200.00.", "1200", CORRECT, "1,200.00"),
        ("end", "It is 12 not 13", "12", INCORRECT, "13"),
        ("begin", "12 apples, not 13", "12", CORRECT, "12"),
        ("any", "between 7 and 12.0 or so", "12", CORRECT, "12.0"),
        ("exact", " 12.0 ", "12", CORRECT, "12.0"),
        ("exact", "12 apples", "12", INCORRECT, "12 apples"),
        ("end", "The result is -4.", "-4", CORRECT, "-4"),
        ("end", "the answer is 0.5", ".5", CORRECT, "0.5"),
    ],
)
def test_match_numeric(
    location: Any, completion: str, target: str, expected: str, answer: str
) -> None:
    score = judge(match(location, numeric=True), make_state(completion, target))
    assert (score.value, score.answer) == (expected, answer)


def test_match_numeric_without_a_number_in_the_answer() -> None:
    score = judge(match(numeric=True), make_state("I do not know", "12"))
    assert score.value == INCORRECT
    assert score.answer is None and score.explanation == "no number found in the answer"


def test_match_numeric_falls_back_to_text_for_a_text_target() -> None:
    assert value(match(numeric=True), "The capital is Paris", "Paris") == CORRECT


def test_match_refuses_an_unknown_location() -> None:
    with pytest.raises(ValueError, match="begin, end, any, exact"):
        match("middle")  # type: ignore[arg-type]


@pytest.mark.parametrize("scorer", [match(), includes(), exact(), f1(), pattern("(.+)")])
def test_an_empty_target_is_an_error_not_a_pass(scorer: PythonScorer) -> None:
    with pytest.raises(ValueError, match="target is empty"):
        judge(scorer, make_state("anything", ""))


# --- includes ---------------------------------------------------------------------------


def test_includes() -> None:
    assert value(includes(), "I believe it is PARIS, France", "paris") == CORRECT
    assert value(includes(), "Lyon", "Paris") == INCORRECT
    assert value(includes(ignore_case=False), "PARIS", "Paris") == INCORRECT
    assert value(includes(), "Rome", ["Paris", "Rome"]) == CORRECT
    assert judge(includes(), make_state("x Paris", "Paris")).answer == "x Paris"


# --- pattern ----------------------------------------------------------------------------


def test_pattern_compares_a_group_with_the_target() -> None:
    scorer = pattern(r"ANSWER:\s*(\w+)")
    assert value(scorer, "reasoning... answer: b", "B") == CORRECT
    wrong = judge(scorer, make_state("ANSWER: C", "B"))
    assert (wrong.value, wrong.answer) == (INCORRECT, "C")
    assert value(pattern(r"ANSWER:\s*(\w+)", ignore_case=False), "answer: B", "B") == INCORRECT


def test_pattern_not_found() -> None:
    score = judge(pattern(r"ANSWER: (\w)"), make_state("no idea", "B"))
    assert score.value == INCORRECT and score.answer is None
    assert score.explanation is not None and "not found" in score.explanation


def test_pattern_any_group_or_all_groups() -> None:
    two = r"first=(\w+) second=(\w+)"
    assert value(pattern(two), "first=x second=B", "B") == CORRECT
    assert value(pattern(two, match_all=True), "first=x second=B", "B") == INCORRECT
    assert value(pattern(two, match_all=True), "first=b second=B", "B") == CORRECT


def test_pattern_without_groups_compares_the_whole_match() -> None:
    assert value(pattern(r"\d+"), "the total is 42 items", "42") == CORRECT
    assert value(pattern(r"\d+"), "the total is 41 items", "42") == INCORRECT


def test_pattern_skips_groups_that_did_not_take_part() -> None:
    scorer = pattern(r"(?:yes: (\w+))|(?:no: (\w+))", match_all=True)
    assert value(scorer, "no: B", "B") == CORRECT


# --- exact ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "target", "expected"),
    [
        ("The  Eiffel\nTower.", "the eiffel tower", CORRECT),
        ("«Eiffel Tower»", "Eiffel Tower", CORRECT),
        ("The Eiffel Tower, Paris", "the eiffel tower", INCORRECT),
        ("Tower", ["Eiffel Tower", "tower"], CORRECT),
    ],
)
def test_exact(completion: str, target: Any, expected: str) -> None:
    assert value(exact(), completion, target) == expected


# --- f1 ---------------------------------------------------------------------------------


def test_f1_gives_partial_credit() -> None:
    assert value(f1(), "Barack Obama", "Obama") == pytest.approx(2 / 3)
    assert value(f1(), "obama.", "Obama") == 1.0
    assert value(f1(), "Lincoln", "Obama") == 0.0


def test_f1_takes_the_best_target_and_counts_repeats() -> None:
    # answer: a a b (3 tokens); target "a b c": common a, b -> p 2/3, r 2/3 -> 2/3
    assert value(f1(), "a a b", ["x y", "a b c"]) == pytest.approx(2 / 3)
    # target "a a": common a, a -> p 2/3, r 1 -> 0.8
    assert value(f1(), "a a b", "a a") == pytest.approx(0.8)


def test_f1_drops_stop_words() -> None:
    assert value(f1(), "the cat", "a cat") == pytest.approx(0.5)
    assert value(f1(stop_words=["the", "A"]), "the cat", "a cat") == 1.0


# --- choice -----------------------------------------------------------------------------


def picked_state(target: Any, picked: list[int], order: list[int] | None = None) -> TaskState:
    """Four choices, in *order* (original positions), with *picked* (display indexes)."""
    state = make_state("ANSWER: ?", target, choices=["w", "x", "y", "z"])
    if order is not None:
        state.choices = [state.choices[i] for i in order]
    for index, item in enumerate(state.choices):
        item.correct = index in picked
    return state


def test_choice_in_dataset_order() -> None:
    assert judge(choice(), picked_state("B", [1])).value == CORRECT
    score = judge(choice(), picked_state("B", [2]))
    assert (score.value, score.answer) == (INCORRECT, "C")


def test_choice_maps_shuffled_choices_back_to_the_dataset_order() -> None:
    # shown as z, x, w, y: the model picked the second shown, which is dataset choice B
    score = judge(choice(), picked_state("B", [1], order=[3, 1, 0, 2]))
    assert (score.value, score.answer) == (CORRECT, "B")
    assert judge(choice(), picked_state("A", [1], order=[3, 1, 0, 2])).value == INCORRECT


def test_choice_with_several_correct_letters_needs_exactly_them() -> None:
    assert judge(choice(), picked_state(["A", "C"], [0, 2])).value == CORRECT
    assert judge(choice(), picked_state("A,C", [0, 2])).value == CORRECT
    assert judge(choice(), picked_state(["A", "C"], [0])).value == INCORRECT
    assert judge(choice(), picked_state(["A", "C"], [0, 1, 2])).value == INCORRECT


def test_choice_with_nothing_picked() -> None:
    score = judge(choice(), picked_state("A", []))
    assert (score.value, score.explanation) == (INCORRECT, "no choice was picked")


def test_choice_refuses_states_it_cannot_judge() -> None:
    with pytest.raises(ValueError, match="no choices"):
        judge(choice(), make_state("ANSWER: A", "A"))
    with pytest.raises(ValueError, match="must be letters among A, B, C, D"):
        judge(choice(), picked_state("E", [0]))


def answer_with(text: str) -> Any:
    """A mock model function that answers the letter shown next to *text*."""

    def answer(messages: list[ChatMessage]) -> str:
        found = re.search(rf"^([A-Z])\) {text}$", messages[-1].content, re.MULTILINE)
        assert found is not None
        return f"ANSWER: {found.group(1)}"

    return answer


@pytest.mark.parametrize("shuffle", [False, True])
def test_choice_after_the_multiple_choice_solver(shuffle: bool) -> None:
    """End to end with the real solver and mock model: shuffling changes nothing."""
    model = get_model("mock/mc", outputs=answer_with("Paris"))

    async def generate(state: TaskState, **config: Any) -> TaskState:
        state.output = await model.generate(state.messages)
        return state

    async def solve_and_score(sample_id: int) -> tuple[Score, list[int]]:
        state = TaskState(
            model="mock/mc",
            sample_id=sample_id,
            epoch=1,
            input="Capital of France?",
            target=Target("C"),
            choices=["Rome", "Berlin", "Paris", "Madrid"],
        )
        state = await multiple_choice(shuffle=shuffle)(state, generate)
        rebuilt = TaskState.from_record(state.to_record(), "C")
        order = [c.original_position for c in rebuilt.choices]
        return await choice()(rebuilt, rebuilt.target), order

    orders = set()
    for sample_id in range(8):
        score, order = anyio.run(solve_and_score, sample_id)
        assert (score.value, score.answer) == (CORRECT, "C")
        orders.add(tuple(order))
    assert (len(orders) > 1) == shuffle
