"""A lost cluster is one line: the Dask client's orphaned gather waiters (``AllExit``),
collected at any time after the client gave up, print no traceback."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

distributed = pytest.importorskip("distributed")


def test_an_orphaned_dask_gather_waiter_logs_nothing_and_other_errors_still_do(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from distributed.client import AllExit

    from assay.run._cluster import _drop_orphaned_gathers

    _drop_orphaned_gathers()
    _drop_orphaned_gathers()  # once per process, however often the cluster is used
    filters = logging.getLogger("asyncio").filters
    assert sum(type(f).__name__ == "_OrphanedGathers" for f in filters) == 1

    async def fail(error: BaseException) -> None:
        raise error

    async def orphans() -> None:
        tasks = [
            asyncio.ensure_future(fail(AllExit())),
            asyncio.ensure_future(fail(KeyError("kept"))),
        ]
        while not all(task.done() for task in tasks):
            await asyncio.sleep(0)
        del tasks  # never retrieved: asyncio logs them as they are collected
        gc.collect()

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(orphans())
    logged = "\n".join(f"{r.getMessage()} {r.exc_info}" for r in caplog.records)
    assert "KeyError" in logged and "kept" in logged  # other errors still reach the log
    assert "AllExit" not in logged
