"""``eval(solver=...)`` and ``assay run --solver NAME -S key=value``: another solver for
every task of the eval, as Inspect's ``inspect eval --solver`` (the task's own setup
steps still run first).

A solver given by name is a registered one (``@solver``, or an ``assay.solvers`` entry
point), made with the ``-S`` arguments; ``file.py@name`` is the ``@solver`` named so in
that file (``file.py`` alone: its only one), imported as a task file is. The run records
the name, the file (its absolute path and SHA-256) and the arguments, so a resume makes
the same solver again. The spec pins the solver chain either way.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
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
        record = _solver_record(solver, args)
        return task_with(copy.copy(task), solver=named_solver(record)), record
    info = registry_info(solver)
    recorded = {"name": info.name, "args": info.args} if info is not None else None
    return task_with(copy.copy(task), solver=solver), recorded


def _solver_record(solver: str, args: dict[str, Any]) -> dict[str, Any]:
    """What the run records of ``--solver NAME`` or ``--solver file.py@name``."""
    file, at, name = solver.partition("@")
    if not (file.endswith(".py") and (at or not name)):
        return {"name": solver, "args": args}
    path = Path(file)
    if not path.is_file():
        reason = f"no such file: {file}"
        raise ConfigError("task.option", option="--solver", reason=reason)
    digest = _digest(path)
    name, _ = _file_solver(path, name)  # ``file.py`` alone: recorded by its solver's name
    return {"name": name, "file": str(path.resolve()), "digest": digest, "args": args}


def named_solver(recorded: dict[str, Any]) -> Any:
    """The solver *recorded* names (registered, or an ``@solver`` of its file), made
    with its arguments; a solver file whose bytes are no longer the ones the run
    recorded is refused (exit 2), as a changed task file is: made again, its solver
    could answer otherwise than the one the run's finished trials ran."""
    name, args = str(recorded["name"]), dict(recorded.get("args") or {})
    if "file" in recorded:
        path = Path(recorded["file"])
        pinned = recorded.get("digest")
        if pinned is not None and path.is_file() and _digest(path) != pinned:  # gone: import says
            raise ConfigError("task.solver_changed", path=str(path))
        name, factory = _file_solver(path, name)
    else:
        factory = lookup("solver", name)
    if factory is None:
        raise ConfigError("task.solver_unknown", name=name)
    try:
        return factory(**args)
    except TypeError as exc:
        raise ConfigError("task.option", option="-S", reason=f"solver {name!r}: {exc}") from None


def _file_solver(path: Path, wanted: str) -> tuple[str, Any]:
    """The ``@solver`` factory named *wanted* in the file at *path* (any name: its only
    one), and its name; a ConfigError naming the file's solvers when it has no such one."""
    from assay.task import load_module  # a solver file is imported as a task file is

    module = load_module(path)
    found = {
        getattr(value, "__assay_name__", attr): value
        for attr, value in vars(module).items()
        if getattr(value, "__assay_kind__", None) == "solver"
        and getattr(value, "__module__", None) == module.__name__
    }
    if wanted in found:
        return wanted, found[wanted]
    if not wanted and len(found) == 1:
        return next(iter(found.items()))
    known = ", ".join(sorted(found)) or "none"
    reason = f"{path} has no @solver named {wanted!r} (its solvers: {known})"
    if not wanted:
        reason = f"{path} has {len(found)} @solver functions ({known}): write {path.name}@NAME"
    raise ConfigError("task.option", option="--solver", reason=reason)


def _digest(path: Path) -> str:
    """``sha256:<hex>`` of the file at *path*'s bytes."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
