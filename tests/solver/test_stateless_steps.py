"""Built-in solvers that hold no state (``generate()``, the message solvers) are used as
they are by every trial: rebuilding them per trial cost CPU and bought no isolation.
Solvers that may hold state are still made fresh (``test_isolation.py`` runs them)."""

from __future__ import annotations

from assay.solver import Chain, TaskState, chain, fresh_solver, generate, solver
from assay.solver._builtin import prompt_template, system_message, user_message


def test_a_chain_of_stateless_built_ins_is_not_rebuilt_per_trial() -> None:
    plan = chain(system_message("be brief"), user_message("go"), prompt_template("{prompt}"))
    plan = chain(plan, generate())
    assert plan.fresh() is plan
    assert all(fresh_solver(step) is step for step in plan.solvers)


def test_a_chain_holding_a_stateful_solver_is_rebuilt_and_keeps_its_stateless_steps() -> None:
    @solver
    def counting() -> object:
        seen: list[str] = []  # state of its own: each trial must get a new list

        async def solve(state: TaskState, generate: object) -> TaskState:
            seen.append(str(state.sample_id))
            return state

        return solve

    step, counter = generate(), counting()
    plan = Chain([step, counter])
    fresh = plan.fresh()
    assert fresh is not plan
    assert fresh.solvers[0] is step
    assert fresh.solvers[1] is not counter
