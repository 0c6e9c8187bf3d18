"""Sandboxes that are no longer there: how ``assay score`` re-judges a sandbox scorer.

A scorer that looks in the sample's sandbox (runs the tests the agent was to fix, reads
the file it was to write) did so while the run went on, and each command and file read
is in the evidence (``score_sandbox_exec``, ``score_sandbox_read``). Re-scoring hands the
scorer a ``ReplayedSandbox`` answering the same command (same argv, same input) or the
same read with what was recorded, in the order it happened; anything else is refused
(``NotRecorded``, the scorer's error). Model-written code never runs again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from assay._digest import canonical_json, sha256_hex
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._recorded import exec_result_of
from assay.sandbox._result import ExecResult

Recorded = dict[tuple[str, ...], deque[dict[str, Any]]]
"""A trial's recorded sandbox use: (kind, sandbox, command or path, input) → events."""


class NotRecorded(Exception):
    """A re-score asked the sandbox for something the run did not record."""


def recorded_key(kind: str, data: dict[str, Any]) -> tuple[str, ...]:
    """The key a ``score_sandbox_exec``/``score_sandbox_read`` event's data is kept under."""
    if kind == "exec":
        return ("exec", data["sandbox"], data["command"], data.get("input") or "")
    return ("read", data["sandbox"], data["path"], "")


class ReplayedSandbox(SandboxEnvironment):
    """Sandbox *name* of a finished trial, answering from *recorded* (see the module)."""

    def __init__(self, name: str, recorded: Recorded, read: Callable[[str], bytes]) -> None:
        self.name = name
        self.recorded = recorded
        self.read = read

    async def create(self) -> None:
        return None

    async def cleanup(self) -> None:
        return None

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        user: str | None = None,
    ) -> ExecResult:
        raw = input.encode() if isinstance(input, str) else input
        given = sha256_hex(raw) if raw is not None else ""
        key = ("exec", self.name, sha256_hex(canonical_json(list(cmd))), given)
        return exec_result_of(self._next(key, f"command {list(cmd)!r}"), self.read)

    async def read_file(self, path: str, text: bool = True) -> Any:
        data = self.read(self._next(("read", self.name, path, ""), f"read of {path!r}")["contents"])
        return data.decode("utf-8") if text else data

    async def write_file(self, path: str, contents: str | bytes) -> None:
        return None  # the sandbox is gone; what a re-score writes changes nothing

    def _next(self, key: tuple[str, ...], what: str) -> dict[str, Any]:
        queued = self.recorded.get(key)
        if not queued:
            raise NotRecorded(
                f"re-scoring asked sandbox {self.name!r} for a {what} the run did not "
                "record; model-written code is never run again"
            )
        return queued.popleft()


def replayed_sandboxes(
    recorded: Recorded, read: Callable[[str], bytes]
) -> dict[str, SandboxEnvironment]:
    """A ``ReplayedSandbox`` for each sandbox the trial's scorers used."""
    names = dict.fromkeys(key[1] for key in recorded)
    return {name: ReplayedSandbox(name, recorded, read) for name in names}
