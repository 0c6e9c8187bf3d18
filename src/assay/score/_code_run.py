"""Tests against model-written code, with a verdict the code cannot forge.

Two processes, each in a sandbox of its own (bubblewrap by default), joined by two pipes
and nothing else:

- the **candidate's host** (``_code_host``) runs the model's program, then answers calls
  to the functions it defined with plain data;
- the **test driver** (``_code_driver``) runs the sample's tests, every call to a
  candidate function crossing the pipes, and writes the verdict on its own stdout.

The candidate shares no process, memory, file descriptor, file or PID namespace with the
driver: it cannot read the driver's frames, patch its builtins or its ``assert``, exit
on its behalf, write its verdict, or signal it. Whatever it does to its own process
(``os._exit(0)``, a fork bomb, a flood, an endless loop, filling a folder) ends, at
worst, with the driver seeing a dead pipe or the harness's timeout: a fail. Both
sandboxes mount every folder read-only (the program and the tests need to write
nothing), so a disk fill or 3,000 nested folders fail at the first write, and the
harness never has to remove what they made. Each process's rlimits come from
``prlimit``; the candidate may not start processes or threads.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

from assay._reap import Reaper
from assay._spawn import open_process
from assay.sandbox import BwrapSandbox, Limits, make_sandbox
from assay.sandbox._bwrap import DEFAULT_PATH, BwrapLaunch, bwrap_launch
from assay.sandbox._workfolder import WorkFolderSandbox
from assay.score._capped import Capped

PROVIDERS = ("bwrap", "local")
_HERE = Path(__file__).parent
_CANDIDATE_EXIT_GRACE = 0.5  # seconds the candidate gets to exit once the tests are done
_DRAIN_GRACE = 1.0  # seconds the readers get once both processes are killed
_VERDICT_BYTES = 64 << 10


class CodeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What each of the two processes may use (see ``python_tests`` for the meanings)."""

    timeout: float = 10.0
    memory_bytes: int = 1 << 30
    output_bytes: int = 16 << 10
    file_bytes: int = 16 << 20
    open_files: int = 256

    def rlimits(self) -> Limits:
        """The ``prlimit`` limits: CPU a second past the wall clock, one process (none
        started: no fork, no thread), address space, file size, open files."""
        cpu = math.ceil(self.timeout) + 1
        return Limits(cpu, self.memory_bytes, 1, self.file_bytes, self.open_files)


class CodeRun(msgspec.Struct, frozen=True):
    """How one run of the tests against a candidate ended (what ``score_exec`` records)."""

    passed: bool
    summary: str
    timed_out: bool
    calls: int
    seconds: float
    exit_code: int | None  # the candidate's process
    signal: str | None
    stdout: str  # the candidate's, capped
    stderr: str  # the candidate's, capped
    tests_output: str  # the driver's stderr: the tests' traceback and what they printed


def script(name: str) -> str:
    """The source run as ``python -I -c``: the wire module, then *name*'s module. Nothing
    of assay exists there, so its imports are dropped; so is ``typing`` (its import is a
    tenth of the start-up), the annotations naming it left unevaluated by one
    ``from __future__ import annotations`` on top."""
    lines = ["from __future__ import annotations"]
    for module in ("_code_wire.py", name):
        for line in (_HERE / module).read_text(encoding="utf-8").splitlines():
            if not line.startswith(("from __future__ ", "from assay.", "from typing ")):
                lines.append(line)
    return "\n".join(lines) + "\n"


_SCRIPTS: dict[str, str] = {}


def _script(name: str) -> str:
    if name not in _SCRIPTS:
        _SCRIPTS[name] = script(name)
    return _SCRIPTS[name]


def check_provider(name: str) -> None:
    """Refuse a provider the two-process design cannot use (it passes pipes to both)."""
    if name not in PROVIDERS:
        raise ValueError(
            f"python_tests(sandbox={name!r}): the tests run in 'bwrap' (isolating, the "
            "default) or 'local' (isolates nothing); choose one of those"
        )


async def run_tests(
    program: str, tests: str, limits: CodeLimits | None = None, *, sandbox: str = "bwrap"
) -> CodeRun:
    """Run *program* in the candidate's sandbox and *tests* in the driver's; the verdict.

    *sandbox* is ``bwrap`` (isolating) or ``local`` (no isolation: trusted code only).
    A program that fails, crashes, hits a limit or times out is a result, never an
    exception; a sandbox that cannot start raises ``ConfigError``.
    """
    check_provider(sandbox)
    limits = limits or CodeLimits()
    candidate_box = make_sandbox(sandbox)
    driver_box = make_sandbox(sandbox)
    assert isinstance(candidate_box, WorkFolderSandbox)
    assert isinstance(driver_box, WorkFolderSandbox)
    async with candidate_box, driver_box:
        await candidate_box.write_file("main.py", program)
        return await _run_pair(candidate_box, driver_box, tests, limits)


async def _run_pair(
    candidate_box: WorkFolderSandbox,
    driver_box: WorkFolderSandbox,
    tests: str,
    limits: CodeLimits,
) -> CodeRun:
    requests_read, requests_write = os.pipe()
    responses_read, responses_write = os.pipe()
    # only a `local` candidate can leave its group (bwrap's PID namespace takes
    # everything with it), so only then is /proc swept for the run's tag
    reaper = None if isinstance(candidate_box, BwrapSandbox) else Reaper()
    started = time.monotonic()
    processes: list[Process] = []
    try:
        host_argv = ["-c", _script("_code_host.py"), str(requests_read), str(responses_write)]
        driver_argv = ["-c", _script("_code_driver.py"), str(requests_write), str(responses_read)]
        processes.append(
            await _spawn(candidate_box, host_argv, limits, reaper, (requests_read, responses_write))
        )
        processes.append(
            await _spawn(driver_box, driver_argv, limits, None, (requests_write, responses_read))
        )
    finally:
        for fd in (requests_read, requests_write, responses_read, responses_write):
            os.close(fd)  # each end lives only in the process it was passed to
        if len(processes) < 2:
            await _stop(processes, reaper)
    candidate, driver = processes
    try:
        outputs, timed_out = await _supervise(candidate, driver, tests, limits, reaper)
    finally:
        await _stop(processes, reaper)
    return _result(candidate, outputs, timed_out, time.monotonic() - started)


async def _spawn(
    box: WorkFolderSandbox,
    arguments: list[str],
    limits: CodeLimits,
    reaper: Reaper | None,
    fds: tuple[int, int],
) -> Process:
    """Start ``python -I`` with *arguments* in *box*, read-only, passing the two *fds*."""
    if isinstance(box, BwrapSandbox):
        with sealed_launch(box, arguments, limits).started() as (argv, options):
            return await _open(argv, None, {}, (*fds, options))
    environment = _local_environment(box, reaper)
    return await _open(local_command(arguments, limits), box.folder, environment, fds)


async def _open(
    argv: list[str], cwd: str | None, env: dict[str, str], fds: tuple[int, ...]
) -> Process:
    return await open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=fds,
    )


def _local_environment(box: WorkFolderSandbox, reaper: Reaper | None) -> dict[str, str]:
    """Nothing of the harness's environment (its keys above all), and the run's tag."""
    variables = {"PATH": os.defpath, "HOME": box.folder, "LANG": "C.UTF-8"}
    return reaper.environment(variables) if reaper is not None else variables


def sealed_launch(box: BwrapSandbox, arguments: list[str], limits: CodeLimits) -> BwrapLaunch:
    """One of the two processes in bubblewrap with every mount read-only (the work folder,
    ``/tmp`` and ``/dev`` too): nothing can be written anywhere."""
    variables = {
        "PATH": DEFAULT_PATH,
        "LANG": "C.UTF-8",
        "HOME": box.mount,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return bwrap_launch(
        ["python3", "-I", *arguments],
        binds=[(box.folder, box.mount, False)],
        workdir=box.mount,
        env=variables,
        network=False,
        limits=limits.rlimits(),
        drop_root=box.drop_root,
        programs=(box.bwrap, box.prlimit),
        sealed=True,
    )


def local_command(arguments: list[str], limits: CodeLimits) -> list[str]:
    """``local``: the harness's own Python under ``prlimit`` with a clean environment."""
    prlimit = ["/usr/bin/prlimit", *limits.rlimits().prlimit_args(), "--"]
    prefix = prlimit if os.access(prlimit[0], os.X_OK) else []
    return [*prefix, sys.executable, "-I", *arguments]


Outputs = dict[str, Capped]


async def _supervise(
    candidate: Process, driver: Process, tests: str, limits: CodeLimits, reaper: Reaper | None
) -> tuple[Outputs, bool]:
    """Feed the tests, read the four outputs (capped), wait for the driver's verdict up
    to the timeout, then give the candidate a moment to leave before it is killed."""
    outputs = {
        "stdout": Capped(limits.output_bytes),
        "stderr": Capped(limits.output_bytes),
        "verdict": Capped(_VERDICT_BYTES),
        "tests": Capped(limits.output_bytes),
    }
    streams = [candidate.stdout, candidate.stderr, driver.stdout, driver.stderr]
    async with anyio.create_task_group() as group:
        drained = [anyio.Event() for _ in streams]
        for stream, sink, done in zip(streams, outputs.values(), drained, strict=True):
            group.start_soon(_drain, stream, sink, done)
        with anyio.move_on_after(limits.timeout) as clock:
            await _send_tests(driver, tests)
            await _close_stdin(candidate)
            await driver.wait()
        if not clock.cancelled_caught:  # the tests are done: it normally leaves at once
            with anyio.move_on_after(_CANDIDATE_EXIT_GRACE):
                await candidate.wait()
        _kill([candidate, driver], reaper)
        with anyio.move_on_after(_DRAIN_GRACE):
            for event in drained:
                await event.wait()
        group.cancel_scope.cancel()
    return outputs, clock.cancelled_caught


async def _send_tests(driver: Process, tests: str) -> None:
    assert driver.stdin is not None
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await driver.stdin.send(tests.encode("utf-8"))
    await _close_stdin(driver)


async def _close_stdin(process: Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await process.stdin.aclose()


async def _drain(stream: ByteReceiveStream | None, sink: Capped, done: anyio.Event) -> None:
    closed = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
    with contextlib.suppress(*closed):
        if stream is not None:
            async for chunk in stream:
                sink.add(chunk)
    done.set()


def _kill(processes: Sequence[Process], reaper: Reaper | None) -> None:
    """Kill each process's group (bwrap's PID namespace takes everything inside with
    it) and, for ``local``, every process carrying the run's tag."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    if reaper is not None and processes:
        reaper.kill(processes[0].pid)


async def _stop(processes: Sequence[Process], reaper: Reaper | None) -> None:
    """Kill and reap both processes, even when the caller is being cancelled."""
    _kill(processes, reaper)
    with anyio.CancelScope(shield=True):
        for process in processes:
            await process.aclose()


def _result(candidate: Process, outputs: Outputs, timed_out: bool, seconds: float) -> CodeRun:
    verdict = _verdict(outputs["verdict"])
    returncode = candidate.returncode
    if timed_out:
        summary = "timed out (both sandboxes were killed)"
    else:
        summary = str(verdict.get("summary") or "the test driver ended without a verdict")
    return CodeRun(
        passed=verdict.get("passed") is True and not timed_out,
        summary=summary,
        timed_out=timed_out,
        calls=int(verdict.get("calls") or 0),
        seconds=round(seconds, 3),
        exit_code=returncode if returncode is None or returncode >= 0 else None,
        signal=_signal_name(returncode),
        stdout=outputs["stdout"].text(),
        stderr=outputs["stderr"].text(),
        tests_output=outputs["tests"].text(),
    )


def _verdict(output: Capped) -> dict[str, Any]:
    """The driver's last stdout line, decoded (empty when it wrote none)."""
    lines = output.text().strip().splitlines()
    try:
        verdict = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return {}
    return verdict if isinstance(verdict, dict) else {}


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
