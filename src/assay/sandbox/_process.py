"""Running one argv as a child process: input piped, output capped, timeout enforced.

The child starts in a session of its own, so a timeout kills its whole process group
(and *kill*, when given, reaches what left the group: the local provider's tag sweep;
bwrap's PID namespace does that by itself). A command killed by signal N, by its
timeout too, has returncode 128 + N (137 for SIGKILL), the shell's convention, since
that is all bwrap can report of its command's death. Output is read to EOF with anything past the
cap dropped, so a flood costs bounded memory; once the child has exited, the readers get
a short grace for what is still in the pipes, since a descendant that kept them open
must not hold the result back.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from assay._spawn import open_process
from assay.sandbox._result import CappedOutput, ExecResult

_DRAIN_GRACE = 2.0  # seconds the readers get after the child exits


async def run_capped(
    argv: Sequence[str],
    *,
    input: bytes | None,
    cwd: str | None,
    env: Mapping[str, str],
    timeout: float | None,
    output_limit: int,
    kill: Callable[[int], None] | None = None,
    pass_fds: Sequence[int] = (),
) -> ExecResult:
    """Run *argv*; return its result, ``timed_out`` if *timeout* seconds passed first.
    *pass_fds* are descriptors the child keeps (bwrap reads its options from one)."""
    stdout, stderr = CappedOutput(output_limit), CappedOutput(output_limit)
    process = await open_process(
        list(argv),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        pass_fds=pass_fds,
    )
    timed_out = False
    try:
        async with anyio.create_task_group() as readers:
            assert process.stdout is not None and process.stderr is not None
            drained = [anyio.Event(), anyio.Event()]
            readers.start_soon(_drain, process.stdout, stdout, drained[0])
            readers.start_soon(_drain, process.stderr, stderr, drained[1])
            if input is not None:
                assert process.stdin is not None
                readers.start_soon(_feed, process.stdin, input)
            timed_out = await _wait(process, timeout)
            _kill(process, kill)
            with anyio.move_on_after(_DRAIN_GRACE):
                for event in drained:
                    await event.wait()
            readers.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _kill(process, kill)
            await process.wait()
            await process.aclose()
    return _result(process, stdout, stderr, timed_out, timeout)


async def _wait(process: Process, timeout: float | None) -> bool:
    """Wait for the child; True if *timeout* passed first."""
    with anyio.move_on_after(math.inf if timeout is None else timeout) as scope:
        await process.wait()
    return scope.cancelled_caught


def _kill(process: Process, kill: Callable[[int], None] | None) -> None:
    if kill is not None:
        kill(process.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _drain(stream: ByteReceiveStream, into: CappedOutput, done: anyio.Event) -> None:
    closed = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)
    with contextlib.suppress(*closed):
        while True:
            into.add(await stream.receive())
    done.set()


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await stream.send(data)
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await stream.aclose()


def shell_returncode(returncode: int | None) -> int:
    """*returncode* with a death by signal N as 128 + N (Python says -N), as bwrap and a
    shell report it: bwrap can only report a signal that way, so every provider does."""
    if returncode is None:
        return 128 + signal.SIGKILL
    return 128 - returncode if returncode < 0 else returncode


def _result(
    process: Process,
    stdout: CappedOutput,
    stderr: CappedOutput,
    timed_out: bool,
    timeout: float | None,
) -> ExecResult:
    returncode = shell_returncode(process.returncode)
    err = stderr.text()
    if timed_out:
        err += f"\n[assay: timed out after {timeout} s; every process it started was killed]\n"
    return ExecResult(
        success=returncode == 0 and not timed_out,
        returncode=returncode,
        stdout=stdout.text(),
        stderr=err,
        timed_out=timed_out,
    )
