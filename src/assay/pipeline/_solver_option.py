"""``eval(solver=...)`` and ``assay run --solver NAME -S key=value``: another solver for
every task of the eval, as Inspect's ``inspect eval --solver`` (the task's own setup
steps still run first).

A solver given by name is a registered one (``@solver``, or an ``assay.solvers`` entry
point), made with the ``-S`` arguments; the run records the name and arguments, so a
resume makes the same solver again. The spec pins the solver chain either way.
"""

from __future__ import annotations

import copy
from typing import Any

from assay._registry import lookup, registry_info
from assay.errors import ConfigError
from assay.task import Task, task_with


def with_solver(
    task: Task, solver: Any, args: dict[str, Any]
) -> tuple[Task, dict[str, Any] | None]:
    """*task* with *solver* instead of its own (a copy: the caller's task is left as it
    was), and what the run records to make it again (``None``: nothing to record)."""
    if solver is None:
        if args:
            raise ConfigError("task.option", option="-S", reason="solver arguments need --solver")
        return task, None
    if isinstance(solver, str):
        made = named_solver({"name": solver, "args": args})
        recorded: dict[str, Any] | None = {"name": solver, "args": args}
    else:
        made = solver
        info = registry_info(solver)
        recorded = {"name": info.name, "args": info.args} if info is not None else None
    return task_with(copy.copy(task), solver=made), recorded


def named_solver(recorded: dict[str, Any]) -> Any:
    """The registered solver *recorded* names, made with its arguments."""
    name, args = str(recorded["name"]), dict(recorded.get("args") or {})
    factory = lookup("solver", name)
    if factory is None:
        raise ConfigError("task.solver_unknown", name=name)
    try:
        return factory(**args)
    except TypeError as exc:
        raise ConfigError("task.option", option="-S", reason=f"solver {name!r}: {exc}") from None
