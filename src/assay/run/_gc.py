"""The cyclic garbage collector while trials run: its young generation made larger.

A model call allocates hundreds of small containers (the SDK's options, headers,
request and response, futures) that nearly all die by reference counting. But with 200
calls in flight, each waiting ~50 ms, they live through many of CPython's young
collections (one per 700 net allocations), get promoted, and soon trigger full
collections, each of which walks the whole heap: the SDK's thousands of pydantic
classes, the plan, the dataset. Against a local server that was a quarter to a third of
a 12,000-sample run's CPU (27 full collections at ~120 ms each; ``bench/README.md``).

So, for the length of a run, the young generation's threshold goes up to ``YOUNG``: a
call's objects die before any collection looks at them, and full collections become
rare. Reference counting is untouched; only cycles wait a little longer (at most
``YOUNG`` objects' worth). The threshold is restored when the last run in flight ends
(runs can nest or overlap).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 50_000
_depth = 0
_saved: tuple[int, ...] = ()


@contextmanager
def collector_tuned() -> Iterator[None]:
    """Collect cycles less often inside this block (see the module docstring)."""
    global _depth, _saved
    if _depth == 0:
        _saved = gc.get_threshold()
        gc.set_threshold(max(YOUNG, _saved[0]), *_saved[1:])
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            gc.set_threshold(*_saved)
