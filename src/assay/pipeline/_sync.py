"""The blocking form of an ``async`` entry point, written once.

Every entry point is async first (``run_spec_async``, ``resume_run_async``, ...); its
blocking form runs it in an event loop of its own (uvloop's when it is installed:
``assay._event_loop``). ``synchronous`` makes that form from the async one with the
same typed signature and docstring, so the parameters are declared in one place.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from assay._event_loop import run

P = ParamSpec("P")
T = TypeVar("T")


def synchronous(function: Callable[P, Awaitable[T]], name: str) -> Callable[P, T]:
    """*function* as a blocking call named *name* (one event loop per call)."""

    @functools.wraps(function)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        return run(functools.partial(function, *args, **kwargs))

    blocking.__name__ = blocking.__qualname__ = name
    return blocking
