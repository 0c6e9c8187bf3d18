"""``fork``: run solvers on copies of a trial's state (Inspect's ``fork``)."""

from __future__ import annotations

import copy
from typing import overload

from assay.solver._solver import Solver, chain, current_generate
from assay.solver._state import TaskState


@overload
async def fork(state: TaskState, solvers: Solver) -> TaskState: ...


@overload
async def fork(state: TaskState, solvers: list[Solver]) -> list[TaskState]: ...


async def fork(state: TaskState, solvers: Solver | list[Solver]) -> TaskState | list[TaskState]:
    """Run each of *solvers* on its own copy of *state* (messages, store, metadata) and
    return the states they end with; *state* itself is left as it was.

    Unlike Inspect's, the copies run one after another, so the trial's events stay in
    one order that a re-run gives again.
    """
    generate = current_generate()
    ended = [await chain(step)(copy.deepcopy(state), generate) for step in _as_list(solvers)]
    return ended if isinstance(solvers, list) else ended[0]


def _as_list(solvers: Solver | list[Solver]) -> list[Solver]:
    return solvers if isinstance(solvers, list) else [solvers]
