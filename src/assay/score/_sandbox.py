"""``run_python``: run one Python program (model-written, so untrusted) in the sealed sandbox.

The program runs exactly as ``python_tests``'s candidate does (see ``_code_run``):
``python3 -I`` in a bubblewrap sandbox of its own with every mount read-only, no network,
an empty environment, rlimits (no new process unless asked) and a wall-clock timeout;
nothing of it outlives its PID namespace. It never runs on the host unisolated (but for
``sandbox="local"``, which says so: trusted code only).

Given ``tests``, they run in a second sandbox, the test driver, calling the program's
functions across a pipe, and only the driver can say "passed": that is the way to judge
model code. Without tests, ``passed`` only says the program loaded to its end without
raising, which is the program's own word: tests appended to the model's code in one
program could be skipped or fooled by it (``os._exit(0)``, a shadowed ``abs``).

A run is recorded in the trial's evidence and replayed by ``assay score``, like
``python_tests``'s, so re-scoring never runs the program again.
"""

from __future__ import annotations

import math

import msgspec

from assay.sandbox import Limits
from assay.score._code_run import CodeLimits, CodeRun, check_provider


class SandboxLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What the sandboxed program (and the test driver) may use.

    Attributes:
        timeout: wall-clock seconds before both sandboxes are killed.
        cpu_seconds: CPU seconds (``RLIMIT_CPU``); by default the timeout plus one, so
            the wall clock usually stops a busy loop first.
        memory_bytes: address space (``RLIMIT_AS``); an allocation past it raises
            ``MemoryError`` in the program.
        file_bytes: the largest file (``RLIMIT_FSIZE``); nothing is writable in the
            sealed sandbox anyway.
        open_files: file descriptors (``RLIMIT_NOFILE``).
        processes: allow the program to start processes and threads (up to
            ``Limits().processes``, counted in its own user namespace); they die with
            the sandbox.
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

    def code_limits(self) -> ProgramLimits:
        """The limits of the two-process run these stand for."""
        cpu = self.cpu_seconds or math.ceil(self.timeout) + 1
        return ProgramLimits(
            timeout=self.timeout,
            memory_bytes=self.memory_bytes,
            output_bytes=self.output_bytes,
            file_bytes=self.file_bytes,
            open_files=self.open_files,
            cpu_seconds=cpu,
            processes=(Limits().processes or 1) if self.processes else 1,
        )


class ProgramLimits(CodeLimits, frozen=True, kw_only=True):
    """``CodeLimits`` with the CPU and process limits ``run_python`` lets callers set."""

    cpu_seconds: int
    processes: int

    def rlimits(self) -> Limits:
        return Limits(
            self.cpu_seconds, self.memory_bytes, self.processes, self.file_bytes, self.open_files
        )


class SandboxResult(msgspec.Struct, frozen=True):
    """How a sandboxed program ended, and what it (and its tests) printed, capped.

    Attributes:
        finished: the program loaded to its end without raising and, given tests, the
            tests ran to their end in the driver (the driver's verdict).
        exit_code: the program's sandbox's exit status (128 + N for a signal inside).
        signal: the signal that killed the sandbox from outside (the timeout's SIGKILL).
        verdict: the driver's one-line account of the run.
        tests_output: what the tests printed, and their traceback.
    """

    finished: bool
    exit_code: int | None
    signal: str | None
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float
    verdict: str = ""
    tests_output: str = ""

    @property
    def passed(self) -> bool:
        """The program (and its tests, if any) ran to the end in time."""
        return self.finished and not self.timed_out

    def summary(self) -> str:
        """One line: how the program ended."""
        if self.timed_out:
            return "timed out (the sandboxes were killed)"
        return "passed" if self.passed else self.verdict


async def run_python(
    code: str,
    limits: SandboxLimits | None = None,
    *,
    tests: str = "",
    sandbox: str = "bwrap",
) -> SandboxResult:
    """Run *code* as ``main.py`` in the sealed sandbox, then *tests* (if any) against it
    from a second one; how it ended.

    A program that fails, crashes, hits a limit or times out is a result, not an
    exception; a sandbox that cannot start raises ``ConfigError``. *sandbox* is
    ``bwrap`` (isolating) or ``local`` (no isolation: trusted code only).
    """
    from assay.score._code import tested  # python_tests' path: record, replay, slots

    check_provider(sandbox)
    program_limits = (limits or SandboxLimits()).code_limits()
    run = await tested(code, tests, program_limits, sandbox, scorer_name="run_python")
    return result_of(run)


def result_of(run: CodeRun) -> SandboxResult:
    """The ``SandboxResult`` of a two-process run."""
    return SandboxResult(
        finished=run.passed,
        exit_code=run.exit_code,
        signal=run.signal,
        timed_out=run.timed_out,
        stdout=run.stdout,
        stderr=run.stderr,
        seconds=run.seconds,
        verdict=run.summary,
        tests_output=run.tests_output,
    )
