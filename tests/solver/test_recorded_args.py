"""Arguments added to a built-in solver after runs were recorded with it are recorded only
when given: a run made before keeps its spec digest, so it still resumes."""

from __future__ import annotations

from assay._registry import registry_info
from assay.solver import generate, multiple_choice
from assay.solver._multiple_choice import MULTIPLE_CHOICE


def args_of(step: object) -> dict[str, object]:
    info = registry_info(step)
    assert info is not None
    return dict(info.args)


def test_generate_records_cache_only_when_given() -> None:
    # the record runs made before generate(cache=) have in their spec
    assert args_of(generate()) == {"tool_calls": "loop"}
    assert args_of(generate(cache=True)) == {"tool_calls": "loop", "cache": True}
    assert args_of(generate(temperature=0.5)) == {"tool_calls": "loop", "temperature": 0.5}


def test_multiple_choice_records_cot_and_multiple_correct_only_when_given() -> None:
    before = {"template": MULTIPLE_CHOICE, "shuffle": False, "seed": 0}
    assert args_of(multiple_choice()) == before
    assert args_of(multiple_choice(cot=True)) == {**before, "cot": True}
    assert args_of(multiple_choice(multiple_correct=True)) == {
        **before,
        "multiple_correct": True,
    }


def test_model_graded_scorers_record_include_history_only_when_given() -> None:
    from assay.scorer import model_graded_fact, model_graded_qa

    for make in (model_graded_qa, model_graded_fact):
        assert "include_history" not in args_of(make())
        assert args_of(make(include_history=True))["include_history"] is True
