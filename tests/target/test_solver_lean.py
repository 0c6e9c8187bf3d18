"""A solver target whose plan is one plain ``generate()`` runs it as one model call
(``_solve_lean``), not through the chain, its step and ``generate_loop``. It must end in
the same state, write the same evidence and show code run by the model (a provider, a
mock's function) the same context as that general path; and it is taken only where
nothing would differ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import assay.target._solver as solver_target
from assay import Sample, Task, eval, generate, match
from assay.approval._apply import active, approval_scope
from assay.dataset import Sample as DatasetSample
from assay.model import ChatMessage, Limits, current_budget, current_epoch, get_model
from assay.sandbox import current_sandboxes, sandbox_scope
from assay.solver import Chain, TaskState, task_scorers
from assay.solver._solver import current_generate
from assay.solver._state import current_state
from assay.target._solver import SolverTarget
from assay.target._solver import _lean as takes_lean_path
from tests.helpers import artifact_bytes, events_of, read_jsonl


def _context(messages: list[ChatMessage]) -> dict[str, Any]:
    """What code run by the model sees of the trial (the mock's function is such code)."""
    state = current_state()
    budget = current_budget()
    return {
        "prompt": messages[-1].text,
        "state": None if state is None else [m.text for m in state.messages],
        "same_messages": state is not None and state.messages is messages,
        "budget": None if budget is None else (budget.limits, budget.calls),
        "epoch": current_epoch(),
        "scorers": len(task_scorers()),
        "sandboxes": dict(current_sandboxes()),
        "approval": active(),
        "generate": callable(current_generate()),
    }


def _run(tmp_path: Path, name: str, limit: int) -> tuple[Path, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def answer(messages: list[ChatMessage]) -> str:
        seen.append(_context(messages))
        return messages[-1].text

    samples = [Sample(input=f"q{i}", target=f"q{i}", id=f"s{i}") for i in range(3)]
    task = Task(dataset=samples, solver=[generate()], scorer=match(), name="lean", epochs=2)
    (result,) = eval(
        task,
        model="mock/m",
        model_args={"outputs": answer},
        log_dir=tmp_path / name,
        max_samples=1,
        message_limit=limit,
    )
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path, seen


def _evidence(run: Path) -> dict[str, Any]:
    """Each trial's state bytes and its model call's event data, prompt and output."""
    calls = [e["data"] for e in events_of(run, "sampling") if "model" in e["data"]]
    return {
        "states": {
            (b["trial"]["sample_id"], b["trial"]["repetition"]): artifact_bytes(
                run, b["observation"]["output"]
            )
            for b in read_jsonl(run / "bundles.jsonl")
        },
        "calls": calls,
        "prompts": [artifact_bytes(run, c["prompt"]) for c in calls],
        "outputs": [artifact_bytes(run, c["output"]) for c in calls],
    }


@pytest.mark.parametrize("limit", [10, 1])  # 1: the limit ends each trial before the call
def test_a_plain_generate_plan_runs_no_chain_and_ends_as_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    chained: list[int] = []
    through_chain = Chain.__call__

    async def counted(self: Chain, state: TaskState, generate: Any) -> TaskState:
        chained.append(1)
        return await through_chain(self, state, generate)

    monkeypatch.setattr(Chain, "__call__", counted)
    lean_run, lean_seen = _run(tmp_path, "lean", limit)
    assert chained == []  # the lean path: no chain for any of the six trials
    monkeypatch.setattr(solver_target, "_lean", lambda target: False)
    general_run, general_seen = _run(tmp_path, "general", limit)
    assert len(chained) == 6  # every trial through the chain
    assert lean_seen == general_seen
    lean, general = _evidence(lean_run), _evidence(general_run)
    assert lean == general
    if limit == 1:
        assert lean_seen == [] and lean["calls"] == []
        assert all(b'"limit":"message"' in state for state in lean["states"].values())
        return
    assert sorted(s["epoch"] for s in lean_seen) == [1, 1, 1, 2, 2, 2]
    assert {(s["scorers"], s["generate"], s["same_messages"]) for s in lean_seen} == {
        (1, True, True)
    }
    assert lean_seen[0]["budget"] == (Limits(message_limit=10), 0)
    assert len(lean["calls"]) == len(lean["states"]) == 6


def _target(plan: list[Any], **options: Any) -> SolverTarget:
    limits = options.pop("limits", Limits())
    return SolverTarget("t", get_model("mock/m"), Chain(plan), limits, **options)


async def _noop(state: TaskState) -> None:
    return None


@pytest.mark.parametrize(
    ("target", "lean"),
    [
        (lambda: _target([generate()]), True),
        (lambda: _target([generate()], scorers=[match()]), True),
        (lambda: _target([generate(tool_calls="single")]), True),  # no tools: one call
        (lambda: _target([generate(temperature=0.5)]), False),
        (lambda: _target([generate(cache=True)]), False),
        (lambda: _target([generate(), generate()]), False),
        (lambda: _target([Chain([generate()])]), False),
        (lambda: _target([generate()], limits=Limits(time_limit=5)), False),
        (lambda: _target([generate()], cleanup=_noop), False),
        (lambda: _target([generate()], approval=[lambda *a: None]), False),
    ],
)
def test_the_lean_path_is_taken_only_for_one_plain_generate(target: Any, lean: bool) -> None:
    assert takes_lean_path(target()) is lean


def test_bindings_made_outside_the_trial_send_it_the_general_way() -> None:
    """Sandboxes or policies bound outside are hidden from the trial's solvers by the
    general path (it binds the trial's own, none); the lean path would leave them."""
    seen: list[dict[str, Any]] = []

    def answer(messages: list[ChatMessage]) -> str:
        seen.append(_context(messages))
        return "ok"

    model = get_model("mock/m", outputs=answer)
    target = SolverTarget("t", model, Chain([generate()]), Limits())
    outer: Any = object()

    async def go() -> str:
        outcome = await target.call(DatasetSample(input="hi", target="ok", id="s1"))
        return outcome.kind

    with sandbox_scope({"default": outer}):
        assert anyio.run(go) == "answered"
    with approval_scope([lambda *a: None]):
        assert anyio.run(go) == "answered"
    assert [(s["sandboxes"], s["approval"]) for s in seen] == [({}, False), ({}, False)]
