"""The solver protocol, ``@solver``, chains, and fresh copies per trial.

A solver is ``async (state, generate) -> state``. ``generate`` asks the trial's model
about ``state.messages`` and appends the answer. Solvers compose with ``chain``; a chain
is itself a solver, so nesting is free. Stateful solvers are made fresh for every trial
(rebuilt from their registered factory, or copied), so memory in one solver cannot leak
between samples or epochs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from assay._registry import lookup, registered, registry_info
from assay.solver._state import TaskState


class Generate(Protocol):
    """The model call a solver is handed."""

    async def __call__(self, state: TaskState, **config: Any) -> TaskState:
        """Ask the model about ``state.messages``; append and set ``state.output``."""
        ...


class Solver(Protocol):
    """One step of working on a trial."""

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        """Return the state after this step."""
        ...


F = TypeVar("F", bound=Callable[..., Any])


def solver(factory: F | None = None, *, name: str | None = None) -> Any:
    """Register a solver factory: ``@solver`` or ``@solver(name="...")``."""
    if factory is None:
        return registered("solver", name)
    return registered("solver", name)(factory)


class Chain:
    """Solvers run in order; itself a solver."""

    def __init__(self, solvers: Sequence[Solver]) -> None:
        self.solvers = list(solvers)

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        for step in self.solvers:
            state = await step(state, generate)
            if state.completed:
                break
        return state

    def fresh(self) -> Chain:
        """A copy whose every step is fresh (see ``fresh_solver``)."""
        return Chain([fresh_solver(s) for s in self.solvers])


def chain(*solvers: Solver | Sequence[Solver]) -> Chain:
    """Run *solvers* one after another (lists are flattened)."""
    flat: list[Solver] = []
    for item in solvers:
        if isinstance(item, Sequence):
            flat.extend(item)
        else:
            flat.append(item)
    return Chain(flat)


def fresh_solver(step: Solver) -> Solver:
    """A fresh instance of *step* for one trial.

    Registered solvers are rebuilt from their factory and recorded arguments; objects
    with a ``copy()`` method are copied with it (seed 003's contract); other objects are
    deep-copied. Plain functions carry no per-trial state and are used as they are.
    """
    if isinstance(step, Chain):
        return step.fresh()
    info = registry_info(step)
    if info is not None and not _has_live_args(info.args):
        factory = lookup("solver", info.name)
        if factory is not None:
            rebuilt: Solver = factory(**info.args)
            return rebuilt
    if hasattr(step, "copy") and callable(step.copy):
        copied: Solver = step.copy()
        return copied
    if callable(step) and hasattr(step, "__code__"):
        return step
    return copy.deepcopy(step)


def _has_live_args(args: dict[str, Any]) -> bool:
    """True when an argument could not be recorded as JSON (it was kept as a repr)."""
    text = repr(args)
    return "$repr" in text or "$registered" in text
