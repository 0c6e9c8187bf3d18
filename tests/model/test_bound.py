"""A trial's budget, epoch, state, ``generate`` and task scorers share one context
variable (``assay.model._bound``): each public scope must still bind and restore its own
field exactly as five separate variables did, in any nesting, and a lean trial's model
call must bind them with one set (the reason for sharing)."""

from __future__ import annotations

import contextvars
from typing import Any

import anyio

from assay import Sample, generate
from assay.model import (
    ChatMessage,
    Limits,
    budget_scope,
    current_budget,
    current_epoch,
    epoch_scope,
    get_model,
)
from assay.model._budget import Budget
from assay.solver import Chain, TaskState, task_scorers, task_scorers_scope
from assay.solver._solver import current_generate
from assay.solver._state import current_state, state_scope
from assay.target._solver import SolverTarget


def _view() -> tuple[Any, ...]:
    """What code in a trial sees of the five bindings."""
    try:
        made = current_generate()
    except RuntimeError:
        made = None
    return current_budget(), current_epoch(), current_state(), made, task_scorers()


def _state(text: str) -> TaskState:
    return TaskState(model="m", sample_id=text, epoch=1, input=text, target=text)


def test_each_scope_binds_its_own_field_and_restores_it_in_any_nesting() -> None:
    budget, other_budget = Budget(Limits()), Budget(Limits(token_limit=5))
    state, other_state = _state("a"), _state("b")
    assert _view() == (None, None, None, None, ())
    with epoch_scope(2):
        with budget_scope(budget), task_scorers_scope(["judge"]):
            assert _view() == (budget, 2, None, None, ("judge",))
            with state_scope(state), epoch_scope(3), budget_scope(other_budget):
                assert _view() == (other_budget, 3, state, None, ("judge",))
                with task_scorers_scope([]), state_scope(other_state):
                    assert _view() == (other_budget, 3, other_state, None, ())
                assert _view() == (other_budget, 3, state, None, ("judge",))
            assert _view() == (budget, 2, None, None, ("judge",))
        assert _view() == (None, 2, None, None, ())
    assert _view() == (None, None, None, None, ())


def test_a_chain_binds_state_and_generate_over_the_scopes_and_restores_them() -> None:
    seen: list[tuple[Any, ...]] = []
    replaced = _state("replaced")

    async def first(state: TaskState, generate: Any) -> TaskState:
        seen.append(_view())
        return replaced  # another state object: the chain binds it for the next step

    async def second(state: TaskState, generate: Any) -> TaskState:
        with epoch_scope(7):
            seen.append(_view())
        seen.append(_view())
        return state

    async def given(state: TaskState, **config: Any) -> TaskState:
        return state

    state = _state("a")
    with epoch_scope(2), task_scorers_scope(["judge"]):
        anyio.run(Chain([first, second]), state, given)
        assert _view() == (None, 2, None, None, ("judge",))
    assert seen == [
        (None, 2, state, given, ("judge",)),
        (None, 7, replaced, given, ("judge",)),
        (None, 2, replaced, given, ("judge",)),
    ]


def test_a_lean_trial_binds_its_five_bindings_with_one_context_variable() -> None:
    seen: list[tuple[int, tuple[Any, ...], list[str]]] = []

    def answer(messages: list[ChatMessage]) -> str:
        state = current_state()
        shown = [] if state is None else [m.text for m in state.messages]
        seen.append((len(contextvars.copy_context()), _view(), shown))
        return "done"

    model = get_model("mock/m", outputs=answer)
    target = SolverTarget("t", model, Chain([generate()]), Limits(), scorers=["judge"])
    outside = len(contextvars.copy_context())
    with epoch_scope(9):  # bound outside the trial: the trial's own epoch is seen
        outcome = anyio.run(target.call, Sample(input="q", target="done", id="s"), 2)
    assert outcome.answer == "done"
    ((inside, (budget, epoch, state, made, scorers), shown),) = seen
    assert inside - outside == 2  # one binding and anyio's own (five variables: six)
    assert isinstance(budget, Budget) and budget.limits == Limits()
    assert (epoch, scorers, callable(made)) == (2, ("judge",), True)
    assert state is not None and shown == ["q"]
    assert _view() == (None, None, None, None, ())
