"""Importing on demand: a user's folder on ``sys.path`` only while one of its files is
imported, and a package's names imported only when first asked for (``lazy_exports``).

A task file or a callable target's module may import the modules beside it
(``from helpers import x``), so its folder goes first on ``sys.path`` while it loads,
as Python does for a script. It is taken off again afterwards: left there, a file
in it named like a standard module (``numbers.py``, ``random.py``) would shadow that
module for every later first import in this process and in the processes it starts.
What the file imported while loading stays imported; a sibling imported only later,
inside a function at call time, is not found (import it at the top of the file).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


@contextlib.contextmanager
def folder_on_path(folder: Path | None) -> Iterator[None]:
    """Put *folder* first on ``sys.path`` for the block, if it is not there already."""
    entry = None if folder is None else str(folder)
    if entry is None or entry in sys.path:
        yield
        return
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # the loaded code took it off itself
            sys.path.remove(entry)


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """A PEP 562 module ``__getattr__`` for *package*: each name in *table* is imported
    from the module *table* names the first time it is asked for, then kept in
    *namespace* (the package's globals), so ``import assay`` and the CLI's start stay
    fast and the next lookup is a plain one. ``__getattr__ = lazy_exports(__name__,
    TABLE, globals())`` at the package's top."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from assay._collector import collection_paused

        with collection_paused():  # what an import makes lives on: nothing to collect
            value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
