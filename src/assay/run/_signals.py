"""Stopping a run cleanly on Ctrl-C or SIGTERM, and at once on a second one."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from types import FrameType

import anyio

from assay.run._groups import first_error


async def run_until_signalled(work: Callable[[], Awaitable[None]], farewell: str = "") -> bool:
    """Await *work*; on SIGINT or SIGTERM cancel it and return True (False if it finished).

    After the first signal a second one ends the process at once (exit 130), writing
    *farewell* (one line: where the run is and how to resume it) so the person is never
    left with silence; evidence stays repairable because every record is appended whole
    or cut off as torn on resume.

    The first signal's handler puts the stop-at-once handler in place itself, before it
    asks the event loop to cancel the work: there is no moment in between in which a
    second signal meets Python's defaults (SIGTERM's kills the process with -15, SIGINT's
    raises KeyboardInterrupt anywhere). Must be called in the main thread.
    """
    loop = asyncio.get_running_loop()
    interrupted = False
    try:
        async with anyio.create_task_group() as group:

            def first(signum: int, frame: FrameType | None) -> None:
                nonlocal interrupted
                interrupted = True
                _stop_at_once_on_next_signal(farewell)
                loop.call_soon_threadsafe(group.cancel_scope.cancel)  # safe in a handler

            previous = {s: signal.signal(s, first) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                await work()
            finally:
                if not interrupted:
                    for signum, handler in previous.items():
                        signal.signal(signum, handler)
            group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None
    return interrupted


def _stop_at_once_on_next_signal(farewell: str) -> None:
    message = (farewell.rstrip("\n") + "\n").encode() if farewell else b""

    def stop(signum: int, frame: FrameType | None) -> None:
        if message:
            os.write(2, message)
        os._exit(130)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
