"""A solver target leaves out the scopes a trial has nothing to bind (no sandboxes, no
approval policies), but only when nothing is bound already: the solvers see exactly
what they saw when every scope was entered for every trial."""

from __future__ import annotations

from typing import Any

import anyio

from assay.approval._apply import active, approval_scope
from assay.dataset import Sample
from assay.model import Limits, get_model
from assay.sandbox import current_sandboxes, sandbox_scope
from assay.solver import Chain, TaskState
from assay.target._solver import SolverTarget


def _seen(approval: tuple[Any, ...] = ()) -> tuple[SolverTarget, list[tuple[Any, bool]]]:
    """A target whose one solver notes the sandboxes and whether approval is active."""
    seen: list[tuple[Any, bool]] = []

    async def look(state: TaskState, generate: Any) -> TaskState:
        seen.append((dict(current_sandboxes()), active()))
        return state

    target = SolverTarget("t", get_model("mock/m"), Chain([look]), Limits(), approval=approval)
    return target, seen


def _call(target: SolverTarget) -> str:
    async def go() -> str:
        outcome = await target.call(Sample(input="hi", target="hi", id="s1"))
        return outcome.kind

    return anyio.run(go)


def test_a_trial_without_sandboxes_or_policies_sees_none() -> None:
    target, seen = _seen()
    assert _call(target) == "answered"
    assert seen == [({}, False)]


def test_sandboxes_and_policies_bound_outside_are_hidden_from_a_trial_without_them() -> None:
    target, seen = _seen()
    outer: Any = object()
    with sandbox_scope({"default": outer}), approval_scope([lambda *a: None]):
        assert _call(target) == "answered"
        assert current_sandboxes() == {"default": outer} and active()  # put back after
    assert seen == [({}, False)]


def test_a_targets_own_policies_are_in_force_for_its_solvers() -> None:
    target, seen = _seen(approval=(lambda *a: None,))
    assert _call(target) == "answered"
    assert seen == [({}, True)]
