"""A user's folder on ``sys.path`` only while one of its files is imported.

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
import sys
from collections.abc import Iterator
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
