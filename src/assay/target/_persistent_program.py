"""One process of a ``protocol: jsonl`` target: its pipes, calls in flight, failures.

The pipes are the event loop's: a target has no lifetime a background task could live
in, so the process's stdout and stderr are watched by reader callbacks on assay's
(asyncio) loop, registered while the process lives, and each call only waits on a future
that the stdout callback settles when its answer line comes. Stdin is written without
waiting when the pipe has room, and by a writer callback otherwise. A per-call cost of a
task, a lock or a stream layer would be most of the cost here: a program that answers at
once costs tens of microseconds a call. Stderr is drained before each stdout chunk is
dispatched, so what a program writes to stderr before it answers goes with that answer
(every call in flight gets a copy of the bytes read while it was), as a per-call
program's stderr does.

Failures of the process are the infrastructure's, never the product's: a crash (its
stdout closes), a hang (a call past its timeout) or garbage on stdout (a line that is not
one JSON answer, an id no call is waiting for, a line past ``max_output_bytes``) kills
the process group, fails every call in flight with ``InfrastructureError`` (so the trials
retry them, on a fresh process, the next call starting one) and leaves the reason in the
evidence. The scratch folder, the environment allow-list, the pinned script's copy and
``sandbox: bwrap`` are the per-call program's (``SubprocessTarget``), made once per
process; the process group and its tagged descendants are reaped when the process fails
and when the run ends (``aclose``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import Process

from assay._reap import Reaper
from assay._spawn import open_process
from assay.sandbox._bwrap import BwrapStatus, bwrap_failure
from assay.target._base import InfrastructureError, TargetOutcome
from assay.target._persistent_wire import (
    ENDED,
    TIMED_OUT,
    Call,
    Ended,
    Result,
    decode_answer,
    outcome,
)
from assay.target._subprocess import SubprocessTarget, _clear

_STDERR_CAP = 65_536  # per call, as for a per-call program
_TAIL = 2_000  # the end of a failed process's stderr, quoted in the failure


class Program:
    """One running process of the program and the calls in flight on it."""

    def __init__(
        self,
        launcher: SubprocessTarget,
        scratch: Path,
        reaper: Reaper,
        stack: contextlib.ExitStack,
        status: BwrapStatus | None,
    ) -> None:
        self.launcher = launcher
        self.scratch = scratch
        self.reaper = reaper
        self.stack = stack
        self.status = status
        self.loop = asyncio.get_running_loop()
        self.process: Process | None = None
        self.in_fd = self.out_fd = self.err_fd = -1
        self.pending: dict[int, Call] = {}
        self.abandoned: set[int] = set()  # cancelled calls: their answers are dropped
        self.outgoing = bytearray()  # request bytes not written yet
        self.waiting_to_write = False  # the loop watches stdin for room
        self.partial = bytearray()  # the start of a stdout line not yet ended
        self.tail = b""
        self.ended = False
        self.last_answer = 0.0  # loop time of the latest answer, for timeouts
        self.failure: InfrastructureError | None = None
        self.cleaned = False
        self.max_line = launcher.max_output
        self.timeout = launcher.timeout

    @classmethod
    async def start(cls, launcher: SubprocessTarget) -> Program:
        """Make the scratch folder and start the program in it (on the host or in bwrap)."""
        with anyio.CancelScope(shield=True):
            scratch = await anyio.to_thread.run_sync(launcher.make_scratch)
        reaper = Reaper()
        stack = contextlib.ExitStack()
        try:
            argv, options, status = stack.enter_context(launcher.how_to_start(scratch, reaper))
            program = cls(launcher, scratch, reaper, stack, status)
            await program._open(argv, options)
        except BaseException:
            stack.close()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_clear, scratch)
            raise
        return program

    async def _open(self, argv: list[str], options: dict[str, Any]) -> None:
        """Start the process on three pipes of our own (non-blocking on our side) and
        watch its stdout and stderr from the loop."""
        pipes = [os.pipe2(os.O_CLOEXEC) for _ in range(3)]
        theirs = (pipes[0][0], pipes[1][1], pipes[2][1])
        ours = (pipes[0][1], pipes[1][0], pipes[2][0])
        try:
            self.process = await open_process(
                argv,
                stdin=theirs[0],
                stdout=theirs[1],
                stderr=theirs[2],
                start_new_session=True,
                **options,
            )
        except OSError as exc:
            for fd in ours:
                os.close(fd)
            why = f"{self.launcher.argv[0]}: {exc}"
            raise InfrastructureError("failed_to_start", why) from None
        finally:
            for fd in theirs:
                os.close(fd)
        for fd in ours:
            os.set_blocking(fd, False)
        self.in_fd, self.out_fd, self.err_fd = ours
        self.loop.add_reader(self.out_fd, self._on_stdout)
        self.loop.add_reader(self.err_fd, self._on_stderr)

    def usable(self) -> bool:
        """Whether a new call may go to this process: it runs and speaks the protocol
        (and on this loop: a target kept across event loops starts a process anew)."""
        if self.failure is not None or self.ended or self.process is None:
            return False
        if self.process.returncode is not None:
            return False
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def answered(self) -> bool:
        """Whether the process has answered a call (an ``error`` answer included): the
        latest answer's time is set by every answer, and only by one."""
        return self.last_answer != 0.0

    async def retire(self) -> InfrastructureError:
        """Clean up this process, found unusable by a new call, and return why it ended:
        its first failure, or how it ended (its exit code, the end of its stderr) when the
        calls that saw it end have not said yet (they may still be waiting for its exit)."""
        if self.failure is None and self.ended:
            await self.fail(await self._end_failure())
        else:
            await self.fail(InfrastructureError("crashed", "the program exited"))
        assert self.failure is not None
        return self.failure

    # -- one call ---------------------------------------------------------------------

    async def ask(self, request_id: int, line: bytes) -> TargetOutcome:
        """Write the request, then wait for the future its answer (or its timer)
        settles. The timeout is a loop timer, not a cancel scope: a tenth of the cost."""
        self._drain_stderr()  # written before this call: not its stderr
        call = self.pending[request_id] = Call(self.loop)
        call.timer = self.loop.call_later(self.timeout, self._expire, call)
        self._write(line)
        try:
            result = await call.future
        except asyncio.CancelledError:
            self.abandoned.add(request_id)
            raise
        finally:
            if call.timer is not None:
                call.timer.cancel()
            self.pending.pop(request_id, None)
        if isinstance(result, TargetOutcome):
            return result
        if result is TIMED_OUT:
            why = f"no answer within {self.timeout:g} s"
            await self.fail(InfrastructureError("timeout", f"{why}; the program is restarted"))
            raise InfrastructureError("timeout", why)
        raise await self._failed(result)

    def _expire(self, call: Call) -> None:
        """Time *call* out, unless the program answered another call in the meantime:
        a call counts from its request or from the latest answer, whichever is later, so
        calls queued behind a program that answers one at a time do not time out while
        it works through them."""
        remaining = self.last_answer + self.timeout - self.loop.time()
        if remaining > 0 and not call.future.done():
            call.timer = self.loop.call_later(remaining, self._expire, call)
        else:
            call.settle(TIMED_OUT)

    async def _failed(self, result: InfrastructureError | Ended) -> InfrastructureError:
        """The failure a call was settled with (for an end, worked out now), once the
        process is cleaned up."""
        if isinstance(result, Ended):
            result = await self._end_failure()
        await self.fail(result)
        assert self.failure is not None
        return self.failure

    def _write(self, line: bytes) -> None:
        """Queue the request; the requests of one turn of the loop go in one write (each
        write wakes the program: on a busy machine, a context switch each)."""
        if self.failure is not None or self.ended:
            self._settle_all()
            return
        if not self.outgoing:
            self.loop.call_soon(self._flush)
        self.outgoing += line

    def _flush(self) -> None:
        """Write what stdin has room for; the loop's writer callback writes the rest."""
        if self.in_fd < 0 or not self.outgoing:
            return
        try:
            written = os.write(self.in_fd, self.outgoing)
        except BlockingIOError:
            written = 0
        except OSError:  # a broken pipe: it has gone
            self._end_now()
            return
        del self.outgoing[:written]
        if self.outgoing and not self.waiting_to_write:
            self.loop.add_writer(self.in_fd, self._flush)
            self.waiting_to_write = True
        elif not self.outgoing and self.waiting_to_write:
            self.loop.remove_writer(self.in_fd)
            self.waiting_to_write = False

    # -- what the process writes -------------------------------------------------------

    def _on_stdout(self) -> None:
        try:
            data = os.read(self.out_fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self._drain_stderr()  # what it wrote before answering goes with the answer
        if not data:
            self._last_line()
            self._end_now()
            return
        self._take(data)

    def _on_stderr(self) -> None:
        self._drain_stderr()

    def _drain_stderr(self) -> None:
        """Read what stderr holds now, without waiting; each call in flight gets it."""
        while self.err_fd >= 0:
            try:
                data = os.read(self.err_fd, 65_536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.loop.remove_reader(self.err_fd)
                return
            self.tail = (self.tail + data)[-_TAIL:]
            for call in self.pending.values():
                room = _STDERR_CAP - len(call.stderr)
                if room > 0 and not call.future.done():
                    call.stderr += data[:room]

    def _take(self, data: bytes) -> None:
        """Split stdout into lines and settle the call each one answers."""
        self.partial += data
        if b"\n" not in data:
            if len(self.partial) > self.max_line:
                self._garbage(bytes(self.partial[:200]), f"a line passed {self.max_line} bytes")
            return
        *lines, rest = self.partial.split(b"\n")
        self.partial = bytearray(rest)
        for line in lines:
            if self.failure is not None:
                return
            if line.strip():
                self._answer(bytes(line))

    def _last_line(self) -> None:
        """An answer the program ended without a newline still answers its call (a JSON
        lines file may end so); other unended bytes are left to the crash's report, which
        names the exit code and the stderr, more use than a half-written line."""
        line = bytes(self.partial).strip()
        self.partial.clear()
        if not line or self.failure is not None or len(line) > self.max_line:
            return
        try:
            answer = decode_answer(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if answer.id in self.pending:
            self._answer(line)

    def _answer(self, line: bytes) -> None:
        if len(line) > self.max_line:
            self._garbage(line[:200], f"a line passed {self.max_line} bytes")
            return
        try:
            answer = decode_answer(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._garbage(line, f"not a JSON answer ({exc})")
            return
        call = self.pending.get(answer.id)
        if call is None or call.future.done():
            if answer.id in self.abandoned:
                self.abandoned.discard(answer.id)  # its call was cancelled: nobody waits
            else:
                self._garbage(line, f"no call in flight has id {answer.id}")
            return
        call.settle(outcome(answer, line, bytes(call.stderr)))
        self.last_answer = self.loop.time()

    def _garbage(self, line: bytes, why: str) -> None:
        """A line no call can own: the process no longer speaks the protocol."""
        detail = f"stdout line {line[:200]!r}: {why}; the program is restarted"
        self._fail_now(InfrastructureError("protocol", detail))

    # -- failing and ending -----------------------------------------------------------

    def _end_now(self) -> None:
        """Stdout closed (or stdin broke): the process is gone, or going."""
        self.ended = True
        self._unwatch()
        self._settle_all()

    def _settle_all(self) -> None:
        result: Result = self.failure if self.failure is not None else ENDED
        for call in self.pending.values():
            call.settle(result)

    async def _end_failure(self) -> InfrastructureError:
        """How the process ended: its exit code and the end of its stderr (or bwrap's
        error, when the program never ran)."""
        if self.failure is not None:
            return self.failure
        process = self.process
        if process is not None:
            with anyio.move_on_after(1, shield=True):
                await process.wait()
        self._drain_stderr()
        code = None if process is None else process.returncode
        stderr = self.tail.decode("utf-8", errors="replace")
        if self.status is not None and code is not None and not self.status.command_ran():
            return InfrastructureError("failed_to_start", bwrap_failure(stderr))
        how = "closed its stdout" if code is None else f"exited with code {code}"
        detail = f"the program {how} with call(s) in flight; it is restarted; "
        detail += f"its stderr ended: {stderr[-500:]!r}"
        return InfrastructureError("crashed", detail)

    def _fail_now(self, failure: InfrastructureError) -> None:
        """Fail every call in flight and kill the process group (the half of ``fail``
        that a loop callback can do)."""
        if self.failure is None:
            self.failure = failure
            self._unwatch()
            if self.process is not None:
                self.reaper.kill(self.process.pid)
        self._settle_all()

    def _unwatch(self) -> None:
        for fd in (self.out_fd, self.err_fd):
            if fd >= 0:
                self.loop.remove_reader(fd)
        if self.in_fd >= 0:
            self.loop.remove_writer(self.in_fd)

    async def fail(self, failure: InfrastructureError) -> None:
        """Fail the calls in flight, kill everything the process started, remove its
        scratch folder. Safe to call again: the first failure is the one reported."""
        self._fail_now(failure)
        if self.cleaned:
            return
        self.cleaned = True
        with anyio.CancelScope(shield=True):
            if self.process is not None:
                with anyio.move_on_after(5):
                    await self.process.wait()
            for fd in (self.in_fd, self.out_fd, self.err_fd):
                if fd >= 0:
                    os.close(fd)
            self.in_fd = self.out_fd = self.err_fd = -1
            self.stack.close()
            await anyio.to_thread.run_sync(_clear, self.scratch)
