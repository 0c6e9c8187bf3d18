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

On uvloop, a child is started by libuv through the C library's ``execvp``, which runs a
file the kernel refuses as a program (no ``#!`` line, not an executable format) with
``/bin/sh`` instead of failing. asyncio's loop fails it (``ENOEXEC``), and a program
that cannot start is an infrastructure failure (docs/spec.md), not a shell script: so on
uvloop such a file is refused here, as the kernel would refuse it.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
from collections.abc import Sequence
from typing import Any

import anyio
from anyio.abc import Process

_PROGRAM_STARTS = (b"#!", b"\x7fELF")  # a script, a binary: what the kernel runs


async def open_process(argv: Sequence[str], **options: Any) -> Process:
    """``anyio.open_process(argv, **options)``, never cancelled before it returns."""
    if type(asyncio.get_running_loop()).__module__.startswith("uvloop"):
        _refuse_what_sh_would_run(argv[0], options.get("cwd"), options.get("env"))
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(list(argv), **options)
    return process


def _refuse_what_sh_would_run(program: str, cwd: Any, env: dict[str, str] | None) -> None:
    """``OSError(ENOEXEC)`` for an executable file that is neither a ``#!`` script nor
    an ELF binary: what ``execve`` refuses and ``execvp`` would hand to ``/bin/sh``."""
    if "/" in program:
        path: str | None = os.path.join(cwd, program) if cwd is not None else program
    else:
        path = shutil.which(program, path=(env if env is not None else os.environ).get("PATH"))
    if path is None or not os.path.isfile(path) or not os.access(path, os.X_OK):
        return  # missing or not executable: the spawn itself fails, as on asyncio
    try:
        with open(path, "rb") as handle:
            start = handle.read(4)
    except OSError:
        return
    if not start.startswith(_PROGRAM_STARTS):
        raise OSError(errno.ENOEXEC, os.strerror(errno.ENOEXEC), path)
