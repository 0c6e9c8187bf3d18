"""The solver protocol, ``@solver``, chains, and fresh copies per trial.

A solver is ``async (state, generate) -> state``. ``generate`` asks the trial's model
about ``state.messages`` and appends the answer (and, when the answer calls the state's
tools, their answers and the model's next answer: see ``_generate``). Solvers compose
with ``chain``; a chain is itself a solver, so nesting is free. Stateful solvers are
made fresh for every trial (rebuilt from their registered factory, or copied), so memory
in one solver cannot leak between samples or epochs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from assay._registry import rebuild, registered
from assay.model._bound import bind, bound_now, unbind
from assay.solver._generate import ToolCalls
from assay.solver._state import TaskState


class Generate(Protocol):
    """The model call a solver is handed."""

    async def __call__(
        self, state: TaskState, tool_calls: ToolCalls = "loop", **config: Any
    ) -> TaskState:
        """Ask the model about ``state.messages`` with ``state.tools``, run the tools it
        calls (per *tool_calls*), append every message and set ``state.output``."""
        ...


class Solver(Protocol):
    """One step of working on a trial."""

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        """Return the state after this step."""
        ...


F = TypeVar("F", bound=Callable[..., Any])


def current_generate() -> Generate:
    """The ``generate`` of the trial whose solvers are running.

    Raises:
        RuntimeError: called outside a trial's solvers.
    """
    found: Generate | None = bound_now().generate  # the running trial's (``Chain``'s)
    if found is None:
        raise RuntimeError("fork() runs solvers of the running trial: call it from a solver")
    return found


def solver(factory: F | None = None, *, name: str | None = None) -> Any:
    """Register a solver factory: ``@solver`` or ``@solver(name="...")``."""
    if factory is None:
        return registered("solver", name)
    return registered("solver", name)(factory)


class Chain:
    """Solvers run in order; itself a solver."""

    def __init__(self, solvers: Sequence[Solver]) -> None:
        self.solvers = list(solvers)
        self._reused: list[Solver] | None = None  # the steps last found to hold no state

    async def __call__(self, state: TaskState, generate: Generate) -> TaskState:
        # the trial's state (for assay.util.store()) and generate (for fork()), one binding
        token = bind(state=state, generate=generate)
        try:
            for step in self.solvers:
                given, state = state, await step(state, generate)
                if state is not given:  # a step may return another state object
                    bind(state=state)
                if state.completed:
                    break
        finally:
            unbind(token)
        return state

    def fresh(self) -> Chain:
        """A copy whose every step is fresh (see ``fresh_solver``); the chain itself when
        no step holds state (``generate()`` alone: nothing to rebuild for every trial)."""
        if self._reused is not None and self._reused == self.solvers:
            return self  # known to hold no state (and the steps are still those)
        steps = [fresh_solver(s) for s in self.solvers]
        if all(new is old for new, old in zip(steps, self.solvers, strict=True)):
            self._reused = steps
            return self
        return Chain(steps)


def chain(*solvers: Solver | Sequence[Solver]) -> Chain:
    """Run *solvers* one after another (lists are flattened)."""
    flat: list[Solver] = []
    for item in solvers:
        if isinstance(item, Sequence):
            flat.extend(item)
        else:
            flat.append(item)
    return Chain(flat)


_STATELESS = "__assay_stateless__"


def stateless(step: F) -> F:
    """Mark *step* (a built-in solver's product) as holding no state of its own: what it
    closes over is never changed, so every trial may use it as it is."""
    setattr(step, _STATELESS, True)
    return step


_PLAIN_GENERATE = "__assay_plain_generate__"


def plain_generate(step: F) -> F:
    """Mark *step* (``generate()`` without settings or ``cache``) as doing nothing but
    ``await generate(state)``: a plan of that one step may be run by its target as one
    model call (``SolverTarget``'s lean path), with the same result."""
    setattr(step, _PLAIN_GENERATE, True)
    return step


def is_plain_generate(plan: Chain) -> bool:
    """Whether *plan* is one ``generate()`` step marked ``plain_generate`` (nothing else:
    no other step that could add tools, messages or settings)."""
    steps = plan.solvers
    return len(steps) == 1 and getattr(steps[0], _PLAIN_GENERATE, False) is True


def fresh_solver(step: Solver) -> Solver:
    """A fresh instance of *step* for one trial.

    Registered solvers are rebuilt by calling their factory again with the arguments they
    were made with (unless marked ``stateless``); objects with a ``copy()`` method are
    copied with it (seed 003's contract); other objects are deep-copied. Plain functions
    carry no per-trial state and are used as they are.
    """
    if isinstance(step, Chain):
        return step.fresh()
    if getattr(step, _STATELESS, False):
        return step
    rebuilt = rebuild(step)
    if rebuilt is not None:
        made: Solver = rebuilt
        return made
    if hasattr(step, "copy") and callable(step.copy):
        copied: Solver = step.copy()
        return copied
    if callable(step) and hasattr(step, "__code__"):
        return step
    return copy.deepcopy(step)
