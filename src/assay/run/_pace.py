"""A worker's checkpoints (``_Pace``) and the running loop's own checkpoint.

Apart from ``_executor`` (module doc there: why a worker makes a checkpoint every
``CHECKPOINT_EVERY`` trials): these run once a run or once every few trials, and a test
counts the checkpoints by patching ``_executor._checkpoint``, which a compiled
``_executor`` (pyproject's mypyc hook) reads through its globals only when the function
comes from an interpreted module like this one.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable

import anyio.lowlevel


class _Pace:
    """One worker's checkpoints, made only when needed: the loop must run a pass every
    ``CHECKPOINT_EVERY`` trials (the worker's comment says why), and a trial that waited
    on the network already let it. A callback put on the loop at each checkpoint says
    whether a pass came since; if one did, the checkpoint is not made. A needless one
    costs the worker's next trial its place: it starts after every other task ready in
    that pass (a burst of answers at 200 connections), so its request goes out later
    and one slot in eight idled a little longer each round."""

    __slots__ = ("_checkpoint", "_loop", "_passed")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, checkpoint: Callable[[], Awaitable[None]]
    ) -> None:
        self._loop = loop
        self._checkpoint = checkpoint
        self._passed = False
        loop.call_soon(self._mark)

    def _mark(self) -> None:
        self._passed = True

    async def __call__(self) -> None:
        """A pass of the loop since the last call: one came by itself, or this makes it."""
        if not self._passed:
            await self._checkpoint()
        self._passed = False
        self._loop.call_soon(self._mark)


def _pacer(
    checkpoint: Callable[[], Awaitable[None]],
) -> Callable[[], Callable[[], Awaitable[None]]]:
    """A new worker's checkpoint: ``_Pace`` on asyncio, a plain checkpoint elsewhere
    (trio: no callback to tell a pass came)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        return lambda: checkpoint
    return functools.partial(_Pace, loop, checkpoint)


def _checkpoint() -> Callable[[], Awaitable[None]]:
    """anyio's ``checkpoint`` for the running loop, looked up once: on asyncio it is
    ``sleep(0)``, but ``anyio.lowlevel.checkpoint`` finds the backend again on every call
    (2 % of a trivial trial's CPU)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio)
        return anyio.lowlevel.checkpoint
    return functools.partial(asyncio.sleep, 0)
