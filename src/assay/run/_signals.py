"""Stopping a run cleanly on Ctrl-C or SIGTERM, and at once on a second one."""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable

import anyio

from assay.run._groups import first_error


async def run_until_signalled(work: Callable[[], Awaitable[None]]) -> bool:
    """Await *work*; on SIGINT or SIGTERM cancel it and return True (False if it finished).

    After the first signal the default handlers are restored, so a second one ends the
    process immediately; evidence stays repairable because every record is appended
    whole or cut off as torn on resume.
    """
    interrupted = False
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        interrupted = True
                        signal.signal(signal.SIGINT, signal.SIG_DFL)
                        signal.signal(signal.SIGTERM, signal.SIG_DFL)
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch)
            await work()
            group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        raise first_error(errors) from None
    if interrupted:
        # open_signal_receiver restored Python's handlers on exit: a second Ctrl-C while
        # the run is sealed must end the process at once, not raise KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return interrupted
