"""Making files durable: fsyncs issued together on threads.

fsync lets go of the GIL and waits on the disk; ext4 commits its journal once for the
fsyncs waiting at the same time, not once for each, so a batch of them costs about one.
Only fsyncs whose order does not matter go in one batch: whatever must be durable
before a rename (or a manifest naming it) is waited for before that rename is made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Executor

_T = TypeVar("_T")

THREADS = 8
"""fsyncs waiting at once, at most."""


def at_once(work: Callable[[_T], None], items: list[_T], pool: Executor | None = None) -> None:
    """*work* on each of *items*, on threads (each waits on the disk, not the GIL): on
    *pool* (the seal's, its threads started once for all its batches), else on threads
    started here; the first error is raised once all are done."""
    from concurrent.futures import ThreadPoolExecutor

    if pool is not None:
        for _ in pool.map(work, items):
            pass
        return
    with ThreadPoolExecutor(min(THREADS, len(items) or 1), "assay-sync") as threads:
        for _ in threads.map(work, items):
            pass


def sync_path(path: Path) -> None:
    """fsync a file or a folder (a folder's entries: a rename in it is then durable)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
