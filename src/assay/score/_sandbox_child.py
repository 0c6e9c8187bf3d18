"""The sandbox's child process: set the limits, refuse new processes, run ``main.py``.

Started by ``_sandbox.run_python`` as ``python -I _sandbox_child.py CPU MEMORY FILE
FILES PROCESSES FD`` inside a fresh temporary folder; it imports nothing from assay.
Limits are set here, after the interpreter started and before any of the code under
test runs, with soft and hard values equal so the code cannot raise them again.

The program counts as finished only when it runs to its end: then the token read from
stdin is written to file descriptor FD. A program that calls ``sys.exit(0)`` or
``os._exit(0)`` halfway exits with status 0 but never writes it, so skipping the tests
that way is not a pass.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import traceback
from typing import Any, NoReturn

BLOCKED = ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "spawnv")


def main(argv: list[str]) -> None:
    """Apply the limits in *argv*, run ``main.py`` as ``__main__``, report its end."""
    cpu, memory, file_size, open_files, processes, fd = (int(a) for a in argv[1:7])
    token = sys.stdin.buffer.readline()
    sys.stdin.close()
    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)  # soft: SIGXCPU; a second later SIGKILL
    set_limit(resource.RLIMIT_AS, memory)
    set_limit(resource.RLIMIT_FSIZE, file_size)
    set_limit(resource.RLIMIT_NOFILE, open_files)
    if not processes:
        # RLIMIT_NPROC counts every process of the user and is ignored for root, so
        # the functions that start processes are also replaced (no security boundary:
        # ctypes gets around it; the process group is killed at the end regardless).
        set_limit(resource.RLIMIT_NPROC, 0)
        block_processes()
    with open("main.py", encoding="utf-8") as handle:
        source = handle.read()
    sys.argv = ["main.py"]
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": "main.py"}
    try:
        exec(compile(source, "main.py", "exec"), namespace)
    except SystemExit:
        raise  # the program left early: its status stands, but it did not finish
    except BaseException as exc:  # shown as the program's own traceback
        sys.stdout.flush()
        frames = exc.__traceback__.tb_next if exc.__traceback__ else None  # skip main()
        traceback.print_exception(type(exc), exc, frames)
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    os.write(fd, token)


def set_limit(kind: int, soft: int, hard: int | None = None) -> None:
    """Lower one resource limit; a platform that refuses it keeps its own."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(kind, (soft, soft if hard is None else hard))


def refuse(*args: object, **kwargs: object) -> NoReturn:
    """Stand-in for every function that starts a process."""
    raise PermissionError("the sandbox does not allow starting processes")


def block_processes() -> None:
    """Replace ``os``'s process starters and the one ``subprocess`` uses."""
    for name in BLOCKED:
        if hasattr(os, name):
            setattr(os, name, refuse)
    try:
        import _posixsubprocess  # what subprocess and multiprocessing fork through

        _posixsubprocess.fork_exec = refuse
    except ImportError:
        pass


if __name__ == "__main__":
    main(sys.argv)
