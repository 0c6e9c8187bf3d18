"""``async with concurrency("name", 4):``: at most that many blocks of one name at once
across the process (Inspect's ``concurrency``), for a service a solver or tool calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.lowlevel import RunVar

# per event loop: a limiter belongs to the loop it was made in (each eval runs its own)
_limiters: RunVar[dict[str, anyio.CapacityLimiter]] = RunVar("assay_concurrency")


@asynccontextmanager
async def concurrency(name: str, concurrency: int, key: str | None = None) -> AsyncIterator[None]:
    """Wait until fewer than *concurrency* blocks of *name* (or *key*, when given) run,
    then run this one. The first call for a name sets its limit."""
    if concurrency < 1:
        raise ValueError(f"concurrency({name!r}, {concurrency}): the limit must be 1 or more")
    try:
        limiters = _limiters.get()
    except LookupError:
        limiters = {}
        _limiters.set(limiters)
    limiter = limiters.get(key or name)
    if limiter is None:
        limiter = limiters[key or name] = anyio.CapacityLimiter(concurrency)
    async with limiter:
        yield
