"""Finding tasks in Python files: ``file.py`` (every task in it) or ``file.py@name``.

A task file is loaded under a name unique to its path, so two folders with a
``tasks.py`` each keep their own. Tasks are the file's ``@task`` factories, called with
the ``-T key=value`` arguments they accept.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from assay._collector import freeze_survivors
from assay._import_path import folder_on_path
from assay._messages import say
from assay._registry import json_safe, registry_info
from assay.errors import ConfigError
from assay.task._task import Task


def load_module(path: Path) -> ModuleType:
    """Import the Python file at *path*, its folder first on ``sys.path`` while it loads
    (so it can import the modules beside it) and off it afterwards (see ``_import_path``:
    a sibling imported only inside a function, at call time, is not found)."""
    real = path.resolve()
    if not real.is_file():
        raise ConfigError("task.file", path=str(path), reason="no such file")
    name = "_assay_tasks_" + hashlib.sha256(str(real).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise ConfigError("task.file", path=str(path), reason="not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with folder_on_path(real.parent):
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # even sys.exit() at import is the file's problem
        del sys.modules[name]
        raise ConfigError(
            "task.file", path=str(path), reason=f"{type(exc).__name__}: {exc}"
        ) from None
    return module


def find_tasks(path: Path) -> list[str]:
    """Names of the ``@task`` functions in a Python file, found by parsing, not importing."""
    import ast  # deferred: only listing needs it

    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                label = (
                    target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                )
                if label == "task":
                    names.append(_task_name(decorator) or node.name)
    return names


def _task_name(decorator: Any) -> str | None:
    """The ``name=`` given to ``@task(name=...)``, if any."""
    import ast

    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
    return None


def task_factories(module: ModuleType) -> dict[str, Any]:
    """The ``@task`` factories defined in *module*, by task name."""
    found = {}
    for attr, value in vars(module).items():
        kind = getattr(value, "__assay_kind__", None)
        if kind == "task" and getattr(value, "__module__", None) == module.__name__:
            found[getattr(value, "__assay_name__", attr)] = value
    return found


def load_tasks(ref: str, args: dict[str, Any] | None = None) -> list[tuple[Task, dict[str, Any]]]:
    """Load ``file.py`` or ``file.py@name``; return each Task with its task record."""
    file, _, wanted = ref.partition("@")
    path = Path(file)
    module = load_module(path)
    factories = task_factories(module)
    if wanted:
        if wanted not in factories:
            known = ", ".join(sorted(factories)) or "none"
            raise ConfigError("task.name", path=file, name=wanted, known=known)
        factories = {wanted: factories[wanted]}
    if not factories:
        raise ConfigError("task.none", path=file)
    digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = []
    for name, factory in factories.items():
        accepted = _accepted(factory, args or {}, name)
        with _made_to_last():
            made = factory(**accepted)
        if not isinstance(made, Task):
            raise ConfigError("task.file", path=file, reason=f"{name}() did not return a Task")
        info = registry_info(made)
        record = {
            "file": str(path.resolve()),
            "name": name,
            "args": info.args if info is not None else accepted,
            "digest": digest,
        }
        loaded.append((made, record))
    return loaded


FACTORY_YOUNG = 1_000_000
"""The collector's young-generation threshold while a task's factory runs."""


@contextlib.contextmanager
def _made_to_last() -> Iterator[None]:
    """The collector while a task's factory runs: its young generation raised to
    ``FACTORY_YOUNG``, and, in a run, what exists at the end frozen with the run's
    survivors (``freeze_survivors``, so the threshold put back sets off no collection).

    Why: a factory makes its dataset, objects that live as long as the run (a sample
    and its metadata: two a sample); young collections while it runs walk them and free
    nothing (4 of them, 11 ms of a 100,000-sample run's start). Cycles that die in the
    factory wait for the next collection, at most ``FACTORY_YOUNG`` objects on.
    """
    saved = gc.get_threshold()
    gc.set_threshold(max(FACTORY_YOUNG, saved[0]), *saved[1:])
    try:
        yield
    finally:
        freeze_survivors()
        gc.set_threshold(*saved)


def _accepted(factory: Any, args: dict[str, Any], name: str) -> dict[str, Any]:
    """The -T arguments *factory* accepts (all of them if it takes ``**kwargs``).

    The others are left out with a warning on stderr naming the task's parameters, as
    Inspect does: a misspelt ``-T`` silently ignored would run another evaluation than
    the one asked for. (Not an error: one ``-T`` may be meant for another task of a
    ``file.py`` holding several.)
    """
    parameters = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(args)
    unknown = [k for k in args if k not in parameters]
    if unknown:
        known = ", ".join(parameters) or "none"
        line = say("task.unknown_args", names=", ".join(unknown), task=name, known=known)
        print(f"assay: {line}", file=sys.stderr)
    return {k: v for k, v in args.items() if k in parameters}


def frozen_defaults(file: str, name: str, args: dict[str, Any]) -> set[str]:
    """The names among *args* (a run's recorded task arguments) whose value is the
    frozen form of task *name*'s own default in *file*.

    A task's record holds every argument, its defaults too; one that is not data (a
    function, say) is frozen as its name or repr, and cannot be passed back. When it is
    the default, the task made again needs nothing passed: it gets the same default.
    """
    factory = task_factories(load_module(Path(file))).get(name)
    if factory is None:
        return set()
    parameters = inspect.signature(factory).parameters
    return {
        key
        for key, value in args.items()
        if key in parameters
        and parameters[key].default is not inspect.Parameter.empty
        and json_safe(parameters[key].default) == value
    }
