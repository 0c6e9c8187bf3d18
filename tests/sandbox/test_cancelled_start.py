"""A command cancelled while its process is being started leaves nothing behind.

On asyncio the pipes of a new process are connected in a task of their own while the
caller waits; a caller cancelled in that wait used to leave the pipes connected after
it gave up open and the child unreaped, each a ``ResourceWarning`` when collected, in
whatever test ran then (seen once failing ``tests/score/test_sandbox.py``).
"""

from __future__ import annotations

import gc
import warnings

import anyio
import anyio.lowlevel

from assay.sandbox import make_sandbox

CHECKPOINTS = range(16)
"""Where the cancellation lands: each of the first checkpoints of starting a command
(the wait for the pipes is a few of them in; more than enough to cover it)."""


def exec_cancelled_after(checkpoints: int) -> None:
    async def main() -> None:
        async with make_sandbox("local") as box:

            async def command() -> None:
                await box.exec(["sleep", "600"], input="")

            async with anyio.create_task_group() as group:
                group.start_soon(command)
                for _ in range(checkpoints):
                    await anyio.lowlevel.checkpoint()
                group.cancel_scope.cancel()

    anyio.run(main)


def test_a_command_cancelled_while_it_starts_leaves_no_pipe_or_process() -> None:
    leaks = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for checkpoints in CHECKPOINTS:
            exec_cancelled_after(checkpoints)
            gc.collect()  # an unclosed transport warns when it is collected
            found = [str(w.message) for w in caught if w.category is ResourceWarning]
            if found:
                leaks[checkpoints] = found
            caught.clear()
    assert leaks == {}
