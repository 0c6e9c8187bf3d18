"""Killing every process a program under test started, the ones that left its group too.

A subprocess target or a sandboxed test program runs in a session of its own, and its
process group is killed when it ends. A descendant that calls ``setsid()`` (a daemon, a
double-forked server) leaves that group, so the group kill cannot reach it. So each
program also gets a tag of its own in its environment (``ASSAY_PROCESS_TAG``), which
every descendant inherits, and once the group is killed every process whose environment
holds the tag is killed too. On Linux the environments are read from
``/proc/PID/environ``: well under a millisecond for a hundred processes, once per
program run (a program costs tens of milliseconds to start). Elsewhere only the group
is killed.

This bounds mistakes, not attackers: a descendant that clears its environment and execs
again still escapes (catching that would take a cgroup).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Mapping

TAG_VARIABLE = "ASSAY_PROCESS_TAG"
_PROC = "/proc"
_ROUNDS = 3  # a process forking while it is found is found on the next round


class Reaper:
    """The tag of one program run, and the kill that ends everything it started.

    ``kill`` may be called at each point where the program must be gone (it answered,
    it flooded, it timed out, the caller is cancelled): the group is killed each time,
    which is cheap, and ``/proc`` is swept once, since after the first sweep nothing
    with the tag is left to start anything.
    """

    def __init__(self) -> None:
        self.tag = secrets.token_hex(12)
        self._swept = False

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """*base* (default: this process's environment) with the tag added."""
        return {**(os.environ if base is None else base), TAG_VARIABLE: self.tag}

    def kill(self, pid: int) -> None:
        """Kill the process group *pid* leads (started in a session of its own), then,
        the first time, whatever left that group with the tag."""
        with contextlib.suppress(ProcessLookupError, PermissionError):  # already empty
            os.killpg(pid, signal.SIGKILL)
        if not self._swept:
            kill_tagged(self.tag)
            self._swept = True


def kill_tagged(tag: str) -> int:
    """SIGKILL every process whose environment holds *tag*; how many were found."""
    if not os.path.isdir(_PROC):
        return 0
    needle = f"{TAG_VARIABLE}={tag}\0".encode()
    killed = 0
    for _ in range(_ROUNDS):
        found = _tagged(needle)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed += len(found)
    return killed


def _tagged(needle: bytes) -> list[int]:
    mine = os.getpid()
    found = []
    with os.scandir(_PROC) as entries:
        for entry in entries:
            name = entry.name
            if not name.isdigit() or int(name) == mine:
                continue
            try:
                with open(f"{_PROC}/{name}/environ", "rb") as handle:
                    if needle in handle.read():
                        found.append(int(name))
            except OSError:  # gone, or another user's
                continue
    return found
