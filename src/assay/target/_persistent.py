"""A long-lived program as a target (``protocol: jsonl``): one request per line, by id.

A per-call program pays a process start for every attempt (about 12 ms here), and a
program that loads a model once can never be fast that way. With ``protocol: jsonl``
the program is started once (or ``workers`` times, a pool) and kept for the run: each
call writes one JSON line to its stdin, ``{"id": N, "sample_id", "input", "metadata"}``,
and reads one JSON line back from its stdout, ``{"id": N, "output": ...}`` or
``{"id": N, "error": ...}``. Answers are matched by ``id``, so they may come in any order.

Reading without a task of its own: a target has no lifetime a background task could live
in, so the calls waiting on one process take turns reading for all of them. The one
reading (the *reader*) hands every answer it reads to its call and, once its own has come,
wakes another waiting call to read next. Stdout and stderr are raw non-blocking pipes:
stderr is drained before each stdout chunk is dispatched, so what a program writes to
stderr before it answers goes with that answer (every call in flight gets a copy of the
bytes read while it was), as a per-call program's stderr does.

Failures of the process are the infrastructure's, never the product's: a crash (its
stdout closes), a hang (a call past its timeout) or garbage on stdout (a line that is not
one JSON answer, an id no call is waiting for) kills the process group, fails every call
in flight with ``InfrastructureError`` (so the trials retry them, on a fresh process, the
next call starting one) and leaves the reason in the evidence. The scratch folder, the
environment allow-list, the pinned script's copy and ``sandbox: bwrap`` are the per-call
program's (``SubprocessTarget``), made once per process; the process group and its tagged
descendants are reaped when the process fails and when the run ends (``aclose``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import Process

from assay._digest import fast_json
from assay._reap import Reaper
from assay.dataset import Sample
from assay.sandbox._bwrap import BwrapStatus, bwrap_failure
from assay.spec import TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome
from assay.target._subprocess import SubprocessTarget, _clear

_JSON = "application/json"
_STDERR_CAP = 65_536  # per call, as for a per-call program
_TAIL = 2_000  # the end of a failed process's stderr, quoted in the failure
_decode = msgspec.json.Decoder().decode


class _Answer(msgspec.Struct):
    """One stdout line: the call it answers, and its output or its error (raw JSON)."""

    id: int
    output: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


_decode_answer = msgspec.json.Decoder(_Answer).decode


class PersistentTarget:
    """A pool of ``workers`` long-lived processes; each call goes to the least busy."""

    def __init__(self, spec: TargetSpec, root: Path) -> None:
        self.id = spec.id
        launcher = SubprocessTarget(spec, root)
        self.workers = [_Worker(launcher) for _ in range(spec.workers)]
        self._ids = itertools.count(1)

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Send *sample* as one request line and wait for its answer line."""
        request: dict[str, Any] = {"id": next(self._ids), "sample_id": sample.id}
        request["input"] = sample.input
        if sample.metadata:
            request["metadata"] = sample.metadata
        worker = min(self.workers, key=_Worker.load)
        return await worker.call(request["id"], fast_json(request) + b"\n")

    async def aclose(self) -> None:
        """End every process (and what it started) and remove its scratch folder."""
        for worker in self.workers:
            await worker.stop()


class _Worker:
    """One place in the pool: its current process, started on demand, replaced when it
    fails."""

    def __init__(self, launcher: SubprocessTarget) -> None:
        self.launcher = launcher
        self.current: _Program | None = None
        self.starting = anyio.Lock()
        self.in_flight = 0

    def load(self) -> int:
        """Calls in flight here (waiting for the process to start included): a new call
        goes to the worker with the fewest."""
        return self.in_flight

    async def call(self, request_id: int, line: bytes) -> TargetOutcome:
        self.in_flight += 1
        try:
            program = await self._program()
            return await program.ask(request_id, line)
        finally:
            self.in_flight -= 1

    async def _program(self) -> _Program:
        """The live process, or a new one when there is none or it has failed."""
        async with self.starting:
            current = self.current
            if current is None or not current.alive():
                if current is not None:
                    await current.fail(InfrastructureError("crashed", "the program exited"))
                current = self.current = await _Program.start(self.launcher)
            return current

    async def stop(self) -> None:
        if self.current is not None:
            await self.current.fail(InfrastructureError("closed", "the run ended"))
            self.current = None


class _Call:
    """A request in flight: what it came to (an outcome or a failure), its stderr, and
    the event that wakes it (answered, failed, or asked to read for the others)."""

    __slots__ = ("result", "stderr", "wake")

    def __init__(self) -> None:
        self.result: TargetOutcome | InfrastructureError | None = None
        self.stderr = bytearray()
        self.wake = anyio.Event()

    def settle(self, result: TargetOutcome | InfrastructureError) -> None:
        if self.result is None:
            self.result = result
        self.wake.set()


class _Program:
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
        self.process: Process | None = None
        self.out_fd = self.err_fd = -1
        self.pending: dict[int, _Call] = {}
        self.abandoned: set[int] = set()  # cancelled calls: their answers are dropped
        self.partial = bytearray()  # the start of a stdout line not yet ended
        self.tail = b""
        self.err_open = True
        self.reading = False
        self.failure: InfrastructureError | None = None
        self.cleaned = False
        self.writing = anyio.Lock()
        self.max_line = launcher.max_output
        self.timeout = launcher.timeout

    @classmethod
    async def start(cls, launcher: SubprocessTarget) -> _Program:
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
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC)
        try:
            self.process = await anyio.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=out_write,
                stderr=err_write,
                start_new_session=True,
                **options,
            )
        except OSError as exc:
            os.close(out_read)
            os.close(err_read)
            why = f"{self.launcher.argv[0]}: {exc}"
            raise InfrastructureError("failed_to_start", why) from None
        finally:
            os.close(out_write)
            os.close(err_write)
        os.set_blocking(out_read, False)
        os.set_blocking(err_read, False)
        self.out_fd, self.err_fd = out_read, err_read

    def alive(self) -> bool:
        return self.failure is None and self.process is not None and self.process.returncode is None

    # -- one call ---------------------------------------------------------------------

    async def ask(self, request_id: int, line: bytes) -> TargetOutcome:
        """Write the request, then wait for its answer, reading for every call in turn."""
        self._drain_stderr()  # written before this call: not its stderr
        call = self.pending[request_id] = _Call()
        if self.failure is not None:  # failed since it was chosen: try again elsewhere
            call.settle(self.failure)
        try:
            with anyio.fail_after(self.timeout):
                if call.result is None:
                    await self._send(line)
                while call.result is None:
                    if not self.reading:
                        await self._read_for(call)
                    else:
                        await call.wake.wait()
                        if call.result is None:
                            call.wake = anyio.Event()
        except TimeoutError:
            why = f"no answer within {self.timeout:g} s"
            await self.fail(InfrastructureError("timeout", f"{why}; the program is restarted"))
            raise InfrastructureError("timeout", why) from None
        except anyio.get_cancelled_exc_class():
            self.abandoned.add(request_id)
            raise
        finally:
            del self.pending[request_id]
            if not self.reading:
                self._wake_a_reader()
        if isinstance(call.result, InfrastructureError):
            raise call.result
        assert call.result is not None
        return call.result

    async def _send(self, line: bytes) -> None:
        stdin = self.process.stdin if self.process is not None else None
        if stdin is None:
            return
        try:
            async with self.writing:
                await stdin.send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._ended()  # it died: what it exited with is the failure

    async def _read_for(self, call: _Call) -> None:
        """Read stdout (and stderr beside it) until *call* has its answer or the process
        fails, then let another waiting call read."""
        self.reading = True
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._pump_stderr)
                await self._pump_stdout(call)
                group.cancel_scope.cancel()
        finally:
            self.reading = False
            self._wake_a_reader()

    def _wake_a_reader(self) -> None:
        for waiting in self.pending.values():
            if waiting.result is None:
                waiting.wake.set()
                return

    async def _pump_stdout(self, call: _Call) -> None:
        while call.result is None:
            try:
                data = os.read(self.out_fd, 1 << 20)
            except BlockingIOError:
                try:
                    await anyio.wait_readable(self.out_fd)
                except anyio.ClosedResourceError:
                    return  # failed meanwhile: every call has its failure
                continue
            except OSError:
                data = b""
            self._drain_stderr()  # what it wrote before answering goes with the answer
            if not data:
                await self._ended()
                return
            self._take(data)
            if self.failure is not None:  # garbage: the process was killed for it
                await self.fail(self.failure)

    async def _pump_stderr(self) -> None:
        while self.err_open:
            try:
                await anyio.wait_readable(self.err_fd)
            except anyio.ClosedResourceError:
                return
            self._drain_stderr()

    def _drain_stderr(self) -> None:
        """Read what stderr holds now, without waiting; each call in flight gets it."""
        while self.err_open:
            try:
                data = os.read(self.err_fd, 65_536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.err_open = False
                return
            self.tail = (self.tail + data)[-_TAIL:]
            for waiting in self.pending.values():
                room = _STDERR_CAP - len(waiting.stderr)
                if waiting.result is None and room > 0:
                    waiting.stderr += data[:room]

    # -- answers ----------------------------------------------------------------------

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

    def _answer(self, line: bytes) -> None:
        if len(line) > self.max_line:
            self._garbage(line[:200], f"a line passed {self.max_line} bytes")
            return
        try:
            answer = _decode_answer(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._garbage(line, f"not a JSON answer ({exc})")
            return
        call = self.pending.get(answer.id)
        if call is None or call.result is not None:
            if answer.id in self.abandoned:
                self.abandoned.discard(answer.id)  # its call was cancelled: nobody waits
            else:
                self._garbage(line, f"no call in flight has id {answer.id}")
            return
        call.settle(_outcome(answer, line, bytes(call.stderr)))

    def _garbage(self, line: bytes, why: str) -> None:
        """A line no call can own: the process no longer speaks the protocol."""
        detail = f"stdout line {line[:200]!r}: {why}; the program is restarted"
        self._fail_now(InfrastructureError("protocol", detail))

    # -- failing and ending -----------------------------------------------------------

    async def _ended(self) -> None:
        """Stdout closed (or stdin broke): the process is gone, or going; say how."""
        process = self.process
        if process is not None:
            with anyio.move_on_after(1, shield=True):
                await process.wait()
        self._drain_stderr()
        code = None if process is None else process.returncode
        stderr = self.tail.decode("utf-8", errors="replace")
        if self.status is not None and code is not None and not self.status.command_ran():
            await self.fail(InfrastructureError("failed_to_start", bwrap_failure(stderr)))
            return
        how = "closed its stdout" if code is None else f"exited with code {code}"
        detail = f"the program {how} with {len(self.pending)} call(s) in flight; "
        detail += f"it is restarted; its stderr ended: {stderr[-500:]!r}"
        await self.fail(InfrastructureError("crashed", detail))

    def _fail_now(self, failure: InfrastructureError) -> None:
        """Fail every call in flight and kill the process group (the sync half of
        ``fail``: the reader calls it between two lines)."""
        if self.failure is None:
            self.failure = failure
            if self.process is not None:
                self.reaper.kill(self.process.pid)
        for call in self.pending.values():
            call.settle(self.failure)

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
                if self.process.stdin is not None:
                    await self.process.stdin.aclose()
            for fd in (self.out_fd, self.err_fd):
                if fd >= 0:
                    anyio.notify_closing(fd)
                    os.close(fd)
            self.out_fd = self.err_fd = -1
            self.err_open = False
            self.stack.close()
            await anyio.to_thread.run_sync(_clear, self.scratch)


def _outcome(answer: _Answer, line: bytes, stderr: bytes) -> TargetOutcome:
    """The product's result: its output (exact bytes) or the error it answered."""
    if len(answer.error):
        why = f"the program answered an error: {bytes(answer.error).decode(errors='replace')}"
        return TargetOutcome("product_failure", line, _JSON, failure=why, stderr=stderr)
    if not len(answer.output):
        why = "the answer has neither 'output' nor 'error'"
        return TargetOutcome("product_failure", line, _JSON, failure=why, stderr=stderr)
    output = bytes(answer.output)
    return TargetOutcome("answered", output, _JSON, value=_decode(output), stderr=stderr)
