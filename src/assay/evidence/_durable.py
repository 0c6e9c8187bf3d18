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
from typing import TypeVar

_T = TypeVar("_T")


def at_once(work: Callable[[_T], None], items: list[_T]) -> None:
    """*work* on each of *items*, on threads (each waits on the disk, not the GIL); the
    first error is raised once all are done."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(8, len(items) or 1), "assay-sync") as pool:
        for _ in pool.map(work, items):
            pass


def sync_path(path: Path) -> None:
    """fsync a file or a folder (a folder's entries: a rename in it is then durable)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
