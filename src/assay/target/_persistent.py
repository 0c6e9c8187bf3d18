"""A long-lived program as a target (``protocol: jsonl``): one request per line, by id.

A per-call program pays a process start for every attempt (about 12 ms here), and a
program that loads a model once can never be fast that way. With ``protocol: jsonl``
the program is started once (or ``workers`` times, a pool) and kept for the run: each
call writes one JSON line to its stdin, ``{"id": N, "sample_id", "input", "metadata"}``,
and reads one JSON line back from its stdout, ``{"id": N, "output": ...}`` or
``{"id": N, "error": ...}``. Answers are matched by ``id``, so they may come in any order.

The process itself (pipes, timers, failures) is ``_persistent_program.Program``.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio

from assay._digest import fast_json
from assay.dataset import Sample
from assay.spec import TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome
from assay.target._persistent_program import Program
from assay.target._subprocess import SubprocessTarget


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
    has failed."""

    def __init__(self, launcher: SubprocessTarget) -> None:
        self.launcher = launcher
        self.current: Program | None = None
        self.starting = anyio.Lock()
        self.in_flight = 0

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
        time: the calls that wait meanwhile all get the new one)."""
        async with self.starting:
            current = self.current
            if current is None or not current.usable():
                if current is not None:
                    await current.fail(InfrastructureError("crashed", "the program exited"))
                current = self.current = await Program.start(self.launcher)
            return current

    async def stop(self) -> None:
        if self.current is not None:
            await self.current.fail(InfrastructureError("closed", "the run ended"))
            self.current = None
