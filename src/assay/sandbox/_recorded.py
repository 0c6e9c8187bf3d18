"""A sandbox whose every command is written into the trial's evidence.

The pipeline hands solvers, tools and scorers this wrapper, never the provider's
environment itself, so no ``exec`` can go unrecorded: each is one ``sandbox_exec`` event
(``score_sandbox_exec`` while scorers run) with the command, its input, stdout and stderr
as artifacts, the exit code, whether it timed out and how long it took. A file a scorer
reads is recorded too (``score_sandbox_read``), so a re-score can answer from evidence.
"""

from __future__ import annotations

import time
from typing import Any

from assay._digest import canonical_json
from assay.evidence import TrialRecorder, current_recorder
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._result import ExecResult

_JSON = "application/json"
_TEXT = "text/plain; charset=utf-8"
_BYTES = "application/octet-stream"


class RecordedSandbox(SandboxEnvironment):
    """*inner* (already created), recording each ``exec`` under the sandbox's *name*."""

    def __init__(self, inner: SandboxEnvironment, name: str) -> None:
        self.inner = inner
        self.name = name

    async def create(self) -> None:  # the lifecycle creates and removes *inner* itself
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
        started = time.monotonic()
        result = await self.inner.exec(cmd, input, cwd, env, timeout, user)
        recorder = current_recorder()
        if recorder is not None:
            seconds = time.monotonic() - started
            record_exec(recorder, self.name, cmd, input, cwd, user, result, seconds)
        return result

    async def read_file(self, path: str, text: bool = True) -> Any:
        data: bytes = await self.inner.read_file(path, text=False)
        recorder = current_recorder()
        if recorder is not None and recorder.scoring:  # so ``assay score`` can replay it
            contents = recorder.store.put(data, _BYTES).sha256
            recorder.record_if_open(
                "sandbox_read", {"sandbox": self.name, "path": path, "contents": contents}
            )
        return data.decode("utf-8") if text else data

    async def write_file(self, path: str, contents: str | bytes) -> None:
        await self.inner.write_file(path, contents)

    def __getattr__(self, name: str) -> Any:  # provider extras (e.g. ``folder``)
        return getattr(self.inner, name)


def record_exec(
    recorder: TrialRecorder,
    name: str,
    cmd: list[str],
    input: str | bytes | None,
    cwd: str | None,
    user: str | None,
    result: ExecResult,
    seconds: float,
    kind: str = "sandbox_exec",
) -> None:
    """One command and what it gave, as an event naming its artifacts."""
    put = recorder.store.put
    data: dict[str, Any] = {
        "sandbox": name,
        "command": put(canonical_json(list(cmd)), _JSON).sha256,
        "returncode": result.returncode,
        "timed_out": result.timed_out,
        "stdout": put(result.stdout.encode(), _TEXT).sha256,
        "stderr": put(result.stderr.encode(), _TEXT).sha256,
        "seconds": round(seconds, 4),
    }
    if input is not None:
        raw = input.encode() if isinstance(input, str) else input
        data["input"] = put(raw, _TEXT if isinstance(input, str) else _BYTES).sha256
    if cwd is not None:
        data["cwd"] = cwd
    if user is not None:
        data["user"] = user
    recorder.record_if_open(kind, data)


def exec_result_of(data: dict[str, Any], get: Any) -> ExecResult:
    """The ``ExecResult`` a recorded ``sandbox_exec`` event stands for (*get* reads an
    artifact's bytes by SHA-256), so a re-score can answer from the evidence."""
    return ExecResult(
        success=data["returncode"] == 0,
        returncode=data["returncode"],
        stdout=get(data["stdout"]).decode(),
        stderr=get(data["stderr"]).decode(),
        timed_out=bool(data.get("timed_out")),
    )
