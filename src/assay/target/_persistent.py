"""A long-lived program as a target (``protocol: jsonl``): one request per line, by id.

A per-call program pays a process start for every attempt (about 12 ms here), and a
program that loads a model once can never be fast that way. With ``protocol: jsonl``
the program is started once (or ``workers`` times, a pool) and kept for the run: each
call writes one JSON line to its stdin, ``{"id": N, "sample_id", "input", "metadata"}``,
and reads one JSON line back from its stdout, ``{"id": N, "output": ...}`` or
``{"id": N, "error": ...}``. Answers are matched by ``id``, so they may come in any order.

The process itself (pipes, timers, failures) is ``_persistent_program.Program``.

A program that can never answer (it exits at start, prints a banner on stdout, hangs
while loading) would be started again for every call and every retry, the run "complete"
hours later with every trial blocked. So each worker counts the processes in a row that
ended without answering a single call, and at ``crash_loop_limit`` it starts no more: the
call raises ``RunError`` (``run.program_crash_loop``), which stops the run (exit 5,
resumable) with the last failure in one line.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio

from assay._digest import fast_json
from assay.dataset import Sample
from assay.errors import RunError
from assay.spec import TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome
from assay.target._persistent_program import Program
from assay.target._subprocess import SubprocessTarget


class PersistentTarget:
    """A pool of ``workers`` long-lived processes; each call goes to the least busy."""

    def __init__(self, spec: TargetSpec, root: Path, attempts: int = 3) -> None:
        self.id = spec.id
        launcher = SubprocessTarget(spec, root)
        limit = crash_loop_limit(attempts)
        self.workers = [_Worker(launcher, limit) for _ in range(spec.workers)]
        self._ids = itertools.count(1)

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Send *sample* as one request line and wait for its answer line."""
        request: dict[str, Any] = {"id": next(self._ids), "sample_id": sample.id}
        request["input"] = sample.input
        if sample.metadata:
            request["metadata"] = sample.metadata
        worker = min(self.workers, key=_Worker.load)
        return await worker.call(request["id"], fast_json(request) + b"\n")

    def new_run(self) -> None:
        """Forget the processes that ended unanswered: the pool now serves another run
        (a cluster worker's, kept from run to run), which counts its own crash loop, so
        a resume after a crash loop starts the program again instead of being refused."""
        for worker in self.workers:
            worker.unanswered = 0

    async def aclose(self) -> None:
        """End every process (and what it started) and remove its scratch folder."""
        for worker in self.workers:
            await worker.stop()


CRASH_LOOP = 10
"""The least number of processes in a row ending without an answer that stops the run.

A poison input (one the program dies on at once, before answering anything) ends at most
one process per attempt of its trial unanswered: its request must be the first the
process reads, since a process that answers any other call first resets the count. With
``retry``'s default 3 attempts, one poison input makes at most 3 such processes in a row,
3 more with another poison input in flight beside it, 9 with three: 10 is never reached
by them, while a program that can never answer reaches it within 4 trials."""


def crash_loop_limit(attempts: int) -> int:
    """The limit for trials of *attempts* attempts each: ``CRASH_LOOP``, or more when
    more attempts let three poison inputs in a row end more processes (``3 · attempts``)."""
    return max(CRASH_LOOP, 3 * attempts + 1)


class _Worker:
    """One place in the pool: its current process, started on demand, replaced when it
    has failed, and how many of its processes in a row ended without an answer."""

    def __init__(self, launcher: SubprocessTarget, limit: int = CRASH_LOOP) -> None:
        self.launcher = launcher
        self.current: Program | None = None
        self.starting = anyio.Lock()
        self.in_flight = 0
        self.limit = limit
        self.unanswered = 0  # processes in a row that ended without answering a call
        self.last_failure = ""  # why the latest of them ended

    def load(self) -> int:
        """Calls in flight here (waiting for the process to start included): a new call
        goes to the worker with the fewest."""
        return self.in_flight

    async def call(self, request_id: int, line: bytes) -> TargetOutcome:
        self.in_flight += 1
        try:
            program = self.current
            if program is None or not program.usable():
                program = await self._replace()
            return await program.ask(request_id, line)
        finally:
            self.in_flight -= 1

    async def _replace(self) -> Program:
        """A new process in place of none, or of one that has failed (one start at a
        time: the calls that wait meanwhile all get the new one, or the same refusal)."""
        async with self.starting:
            current = self.current
            if current is None or not current.usable():
                if current is not None:
                    self.current = None  # counted once, by whichever call finds it
                    failure = await current.retire()
                    self._count(current.answered(), failure)
                if self.unanswered >= self.limit:
                    raise self._crash_loop()
                try:
                    current = self.current = await Program.start(self.launcher)
                except InfrastructureError as exc:  # it never ran: no answer either
                    self._count(False, exc)
                    raise
            return current

    def _count(self, answered: bool, failure: InfrastructureError) -> None:
        """Count a process that has ended: an answer resets the count to 0."""
        self.unanswered = 0 if answered else self.unanswered + 1
        self.last_failure = f"{failure.reason}: {failure.detail}"

    def _crash_loop(self) -> RunError:
        """The error that stops the run, quoting the last failure (its exit code, the end
        of its stderr), cut to one bounded line."""
        last = self.last_failure.replace("; the program is restarted", "")
        last = last.replace("; it is restarted", "")  # (it is not, now)
        if len(last) > 300:
            last = f"{last[:120]} ... {last[-180:]}"
        return RunError(
            "run.program_crash_loop",
            target=self.launcher.id,
            count=self.unanswered,
            last=last,
            path="RUN",
        )

    async def stop(self) -> None:
        if self.current is not None:
            await self.current.fail(InfrastructureError("closed", "the run ended"))
            self.current = None
