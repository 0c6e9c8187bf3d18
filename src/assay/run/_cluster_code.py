"""Is the scheduler and every worker running the same assay as the driver?

Calls, replies and tasks cross to the cluster pickled: a worker (or a scheduler that
unpickles the graph) running other assay code fails on them with Dask's own message
about deserialization, an internal error to the user, after the run folder was made. A
long-lived ``dask scheduler`` started before assay was updated is the usual case. So
the driver compares, once it is connected, a digest of assay's source files (and its
version) on each side with its own, and refuses the run in one line when they differ.
A scheduler without assay installed is fine: it never needs assay's code.
"""

from __future__ import annotations

import functools
import hashlib
import os
from typing import Any

import assay
from assay.errors import ConfigError


@functools.cache
def code_digest() -> str:
    """``VERSION+HEX``: assay's version and the SHA-256 of its source files (their
    paths and bytes, in order), read once a process."""
    root = os.path.dirname(os.path.abspath(assay.__file__ or ""))
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode() + b"\0")
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return f"{assay.__version__}+{digest.hexdigest()[:12]}"


async def check_same_code(client: Any) -> None:
    """Refuse the run (exit 2, nothing written) when the scheduler or a worker runs
    other assay code than this driver."""
    mine = code_digest()
    try:
        theirs = {"the scheduler": await client.run_on_scheduler(code_digest)}
    except ModuleNotFoundError:  # no assay there: a scheduler that never needs it
        theirs = {}
    except Exception as exc:  # an older assay, without this function
        theirs = {"the scheduler": f"unknown ({type(exc).__name__})"}
    workers = await client.run(code_digest, on_error="return")
    for worker, digest in sorted(workers.items()):
        theirs[f"worker {worker}"] = (
            digest if isinstance(digest, str) else f"unknown ({type(digest).__name__})"
        )
    for who, digest in theirs.items():
        if digest != mine:
            raise ConfigError("cluster.other_code", who=who, theirs=digest, mine=mine)
