"""Starting a child process that a cancellation cannot catch halfway through.

``anyio.open_process`` on asyncio (Python 3.11) starts the child, then connects its
pipes in a task of its own while the caller waits. A caller cancelled in that wait has
the transport closed under it and its wait for the child's exit cancelled in turn (anyio
delivers a cancellation again at each checkpoint): the pipes connected after the close
stay open, and the child is never reaped by the loop. Each is a ``ResourceWarning``
("unclosed transport", "subprocess N is still running") when the garbage collector finds
it, in whatever test is running then, and a pipe and a zombie leaked in a long run.
Starting takes milliseconds, so it is shielded: the cancellation is taken at the
caller's next checkpoint, with the process in hand to kill and reap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from anyio.abc import Process


async def open_process(argv: Sequence[str], **options: Any) -> Process:
    """``anyio.open_process(argv, **options)``, never cancelled before it returns."""
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(list(argv), **options)
    return process
