"""What one test may change in this process, taken before it and put back after it.

Tests run in any order (pytest-randomly) and several to a process (pytest-xdist), so a
test that leaves a folder on ``sys.path``, a variable in ``os.environ``, a module loaded
from its temp folder or a provider in a registry changes what the next one sees.
``ProcessState.take()`` notes all of that; ``restore()`` undoes what the test added.

Modules are forgotten only when they came from a test's own files (a temp folder, a task
file, a callable target): a library imported for the first time during a test stays,
since importing it again (numpy, a C extension) can break it. A registry entry stays
only if it was defined at the top of a module that stays imported; one made inside a
test, or by a module forgotten here, goes.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
_LOADED_FROM_USER_FILES = ("_assay_tasks_", "_assay_target_")
_PYTEST_PHASE = "PYTEST_CURRENT_TEST"


def _library_roots() -> tuple[str, ...]:
    """Folders whose modules are libraries (never imported twice): the standard library,
    site-packages, this checkout (src/, tests/) and whatever was on ``sys.path`` before
    any test ran (an editable install's folder, say)."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    roots.add(str(REPO))
    roots.update(entry for entry in sys.path if entry)
    return tuple(os.path.realpath(root) + os.sep for root in roots)


_LIBRARY_ROOTS = _library_roots()


def from_user_files(name: str, module: ModuleType | None) -> bool:
    """True for a module a test loaded from its own files, which may be forgotten."""
    if name.startswith(_LOADED_FROM_USER_FILES):
        return True
    file = getattr(module, "__file__", None)
    if not file:
        return False  # built in, or a namespace: nothing to load again
    return not os.path.realpath(file).startswith(_LIBRARY_ROOTS)


def defined_at_top_of_module(value: Any) -> bool:
    """True if *value* is a top-level definition of a module still imported."""
    qualname = getattr(value, "__qualname__", "")
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    return module is not None and bool(qualname) and "<locals>" not in qualname


def _registries() -> list[tuple[MutableMapping[Any, Any], Callable[[Any], bool]]]:
    """assay's process-wide tables, each with the rule for keeping an entry a test added."""
    from assay import _registry
    from assay.model import _prices
    from assay.model import _registry as _providers
    from assay.sandbox import _registry as _sandboxes
    from assay.score import _reducers

    return [
        (_registry._REGISTRY, defined_at_top_of_module),
        (_providers._providers, defined_at_top_of_module),
        (_reducers.REDUCERS, defined_at_top_of_module),
        (_sandboxes._providers, defined_at_top_of_module),
        (_prices._user_prices, lambda _: False),  # set_price: the test's own prices
    ]


@dataclass
class ProcessState:
    """``sys.path``, modules, environment, working folder and registries at one moment."""

    path: list[str]
    modules: set[str]
    environ: dict[str, str]
    cwd: str
    tables: list[tuple[MutableMapping[Any, Any], dict[Any, Any], Callable[[Any], bool]]] = field(
        default_factory=list
    )

    @classmethod
    def take(cls) -> ProcessState:
        tables = [(table, dict(table), keep) for table, keep in _registries()]
        return cls(list(sys.path), set(sys.modules), dict(os.environ), _cwd(), tables)

    def restore(self) -> None:
        """Put back what was noted; forget what the test loaded from its own files."""
        sys.path[:] = self.path
        for name in set(sys.modules) - self.modules:
            if from_user_files(name, sys.modules.get(name)):
                del sys.modules[name]
        _restore_environ(self.environ)
        if _cwd() != self.cwd:
            os.chdir(self.cwd)
        for table, before, keep in self.tables:
            _restore_table(table, before, keep)


def _restore_environ(before: dict[str, str]) -> None:
    """``os.environ`` as *before*, but for the variable pytest itself keeps per phase."""
    for key in set(os.environ) - set(before) - {_PYTEST_PHASE}:
        del os.environ[key]
    for key, value in before.items():
        if key != _PYTEST_PHASE and os.environ.get(key) != value:
            os.environ[key] = value


def _cwd() -> str:
    """The working folder ("" if a test removed it while it was in it)."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return ""


def _restore_table(
    table: MutableMapping[Any, Any], before: dict[Any, Any], keep: Callable[[Any], bool]
) -> None:
    """Entries a test replaced get their old value; entries it added go, unless *keep*."""
    for key in list(table):
        if key in before:
            table[key] = before[key]
        elif not keep(table[key]):
            del table[key]
    for key, value in before.items():
        table.setdefault(key, value)
