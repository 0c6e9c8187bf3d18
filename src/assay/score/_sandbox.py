"""Run a Python program in a limited subprocess: the ground a code-executing scorer stands on.

Each program runs as ``python -I`` in a fresh temporary folder, in its own process group
and session, with an environment of its own (no API keys inherited), under resource
limits (CPU seconds, address space, file size, open files, no new processes) and a
wall-clock timeout. Its stdout and stderr are kept up to a cap (head and tail), so a
reviewer sees why it failed without a runaway print filling the disk. When it ends, for
any reason, its whole process group is killed, and every process that inherited its tag
(see ``assay._reap``), so nothing it started is left running, not even a daemon.

This bounds mistakes, not attackers: the code can still read the files its user can and
open sockets. Run code you do not trust inside a container or VM as well. POSIX only
(resource limits and process groups).
"""

from __future__ import annotations

import math
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

from assay._reap import Reaper

_CHILD = Path(__file__).with_name("_sandbox_child.py")
# After the group is killed, output still in the pipes is read for this long at most
# (a process that escaped the group could hold them open forever).
_DRAIN_GRACE = 1.0


class SandboxLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What a sandboxed program may use.

    Attributes:
        timeout: wall-clock seconds before the process group is killed.
        cpu_seconds: CPU seconds (``RLIMIT_CPU``); by default the timeout plus one, so
            the wall clock usually stops a busy loop first.
        memory_bytes: address space (``RLIMIT_AS``); an allocation past it raises
            ``MemoryError`` in the program.
        file_bytes: the largest file the program may write (``RLIMIT_FSIZE``).
        open_files: file descriptors (``RLIMIT_NOFILE``).
        processes: allow starting processes (and threads): ``RLIMIT_NPROC`` counts all
            of a user's processes, so the limit can only be all or nothing.
        output_bytes: bytes of stdout and of stderr kept (half from the start, half
            from the end); the rest is counted and cut.
    """

    timeout: float = 10.0
    cpu_seconds: int | None = None
    memory_bytes: int = 1 << 30
    file_bytes: int = 16 << 20
    open_files: int = 256
    processes: bool = False
    output_bytes: int = 16 << 10


class SandboxResult(msgspec.Struct, frozen=True):
    """How a sandboxed program ended, and what it printed (capped)."""

    finished: bool
    exit_code: int | None
    signal: str | None
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float

    @property
    def passed(self) -> bool:
        """The program ran to its end and exited with status 0."""
        return self.finished and self.exit_code == 0 and not self.timed_out

    def summary(self) -> str:
        """One line: how the program ended."""
        if self.timed_out:
            return "timed out (the process group was killed)"
        if self.signal is not None:
            cause = _SIGNAL_CAUSES.get(self.signal, "")
            return f"killed by {self.signal}{cause}"
        if self.exit_code != 0:
            return f"exit status {self.exit_code}"
        if not self.finished:
            return "exited with status 0 before the end of the program (sys.exit or os._exit)"
        return "passed"


_SIGNAL_CAUSES = {
    "SIGXCPU": " (the CPU-time limit)",
    "SIGKILL": " (a limit was hit, or it was killed)",
    "SIGSEGV": " (a crash; the memory limit can cause it)",
}


async def run_python(
    code: str, limits: SandboxLimits | None = None, *, python: str | None = None
) -> SandboxResult:
    """Run *code* as ``main.py`` under *limits*; return how it ended.

    A program that fails, crashes, hits a limit or times out is a result, not an
    exception; only a sandbox that cannot start (no interpreter, no temp dir) raises.
    The event loop is never blocked: the process is awaited, never waited for.
    """
    limits = limits or SandboxLimits()
    token = secrets.token_hex(16).encode()
    reaper = Reaper()
    with tempfile.TemporaryDirectory(prefix="assay-sandbox-") as folder:
        Path(folder, "main.py").write_text(code, encoding="utf-8")
        marker_read, marker_write = os.pipe()
        try:
            os.set_blocking(marker_read, False)
            argv = [python or sys.executable, "-I", str(_CHILD), *_limit_args(limits)]
            argv.append(str(marker_write))
            started = time.monotonic()
            try:
                process = await anyio.open_process(
                    argv,
                    stdin=subprocess.PIPE,
                    cwd=folder,
                    env=reaper.environment(_environment(folder)),
                    start_new_session=True,
                    pass_fds=(marker_write,),
                )
            finally:
                os.close(marker_write)
            try:
                out, err, timed_out = await _supervise(process, reaper, token, limits)
            finally:
                await _stop(process, reaper)
            finished = _read_marker(marker_read) == token
        finally:
            os.close(marker_read)
    code_or_signal = process.returncode
    return SandboxResult(
        finished=finished,
        exit_code=code_or_signal if code_or_signal is None or code_or_signal >= 0 else None,
        signal=_signal_name(code_or_signal),
        timed_out=timed_out,
        stdout=out.text(),
        stderr=err.text(),
        seconds=round(time.monotonic() - started, 3),
    )


def _limit_args(limits: SandboxLimits) -> list[str]:
    cpu = limits.cpu_seconds or math.ceil(limits.timeout) + 1
    values = (cpu, limits.memory_bytes, limits.file_bytes, limits.open_files)
    return [*map(str, values), "1" if limits.processes else "0"]


def _environment(folder: str) -> dict[str, str]:
    """A clean environment: nothing of the harness's (API keys above all) is inherited."""
    return {"PATH": os.defpath, "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8"}


async def _supervise(
    process: Process, reaper: Reaper, token: bytes, limits: SandboxLimits
) -> tuple[_Capped, _Capped, bool]:
    """Feed the token, collect capped output, wait up to the timeout, kill the group."""
    out, err = _Capped(limits.output_bytes), _Capped(limits.output_bytes)
    async with anyio.create_task_group() as group:
        drained = [anyio.Event(), anyio.Event()]
        group.start_soon(_drain, process.stdout, out, drained[0])
        group.start_soon(_drain, process.stderr, err, drained[1])
        with anyio.move_on_after(limits.timeout) as clock:
            await _send(process, token)
            await process.wait()
        reaper.kill(process.pid)  # whatever it left behind, and it, on a timeout
        with anyio.move_on_after(_DRAIN_GRACE):
            for event in drained:
                await event.wait()
        group.cancel_scope.cancel()
    return out, err, clock.cancelled_caught


async def _send(process: Process, token: bytes) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(token + b"\n")
        await process.stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the program ended before reading it: it cannot have finished


async def _drain(stream: ByteReceiveStream | None, sink: _Capped, done: anyio.Event) -> None:
    try:
        if stream is not None:
            async for chunk in stream:
                sink.add(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        done.set()


async def _stop(process: Process, reaper: Reaper) -> None:
    """Kill everything it started and reap it, even when the caller is being cancelled."""
    reaper.kill(process.pid)
    with anyio.CancelScope(shield=True):
        await process.aclose()


def _read_marker(fd: int) -> bytes:
    try:
        return os.read(fd, 64).strip()
    except BlockingIOError:
        return b""


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class _Capped:
    """The first and last ``cap // 2`` bytes of a stream, and how many were cut between."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: -self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes cut ...]\n" if cut else ""
        return self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")
