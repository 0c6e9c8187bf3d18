"""Stopping a run cleanly on Ctrl-C or SIGTERM, and at once on a second one."""

from __future__ import annotations

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
    """
    interrupted = False
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        break
                # leaving the receiver put Python's handlers back: replace them at once
                _stop_at_once_on_next_signal(farewell)
                interrupted = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await work()
            group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None
    if interrupted:
        _stop_at_once_on_next_signal(farewell)  # also while the run is being sealed
    return interrupted


def _stop_at_once_on_next_signal(farewell: str) -> None:
    message = (farewell.rstrip("\n") + "\n").encode() if farewell else b""

    def stop(signum: int, frame: FrameType | None) -> None:
        if message:
            os.write(2, message)
        os._exit(130)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
