"""Run a program per sample: argv (never a shell), the sample as JSON on stdin, JSON out.

The program runs in its own session, so on timeout, on an output flood, or once it has
answered, its whole process group is killed, and with it every process that inherited
its tag (see ``assay._reap``): a target cannot leave children behind, not even daemons.
Failing to start and timing out are infrastructure errors; a non-zero exit, output that
is not JSON or too much output are product failures, recorded and never retried.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

from assay._digest import fast_json
from assay._reap import Reaper
from assay.dataset import Sample
from assay.spec import PYTHON, TargetSpec
from assay.target._base import InfrastructureError, TargetOutcome, target_payload

_JSON = "application/json"
_decode = msgspec.json.Decoder().decode


class SubprocessTarget:
    """A program under test, started once per attempt."""

    def __init__(self, spec: TargetSpec, cwd: Path) -> None:
        self.id = spec.id
        self.argv = [sys.executable if part == PYTHON else part for part in spec.argv]
        self.cwd = cwd
        self.timeout = spec.timeout
        self.max_output = spec.max_output_bytes

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Run the program on *sample* and classify what happened."""
        payload = fast_json(target_payload(sample))
        reaper = Reaper()
        try:
            process = await anyio.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=reaper.environment(),
                start_new_session=True,
            )
        except OSError as exc:
            raise InfrastructureError("failed_to_start", f"{self.argv[0]}: {exc}") from None
        try:
            with anyio.fail_after(self.timeout):
                stdout, stderr, flooded = await self._exchange(process, reaper, payload)
        except TimeoutError:
            raise InfrastructureError("timeout", f"no answer within {self.timeout:g} s") from None
        finally:
            reaper.kill(process.pid)
            await _reap(process)
        return _classify(stdout, stderr, process.returncode, flooded, self.max_output)

    async def _exchange(
        self, process: Process, reaper: Reaper, payload: bytes
    ) -> tuple[bytes, bytes, bool]:
        chunks: dict[str, bytearray] = {"out": bytearray(), "err": bytearray()}
        flooded = False

        async def read(name: str, stream: ByteReceiveStream | None, cap: int) -> None:
            nonlocal flooded
            if stream is None:
                return
            buffer = chunks[name]
            async for chunk in stream:
                buffer += chunk
                if len(buffer) > cap:
                    if name == "out":
                        flooded = True
                    reaper.kill(process.pid)
                    return

        async with anyio.create_task_group() as group:
            group.start_soon(read, "out", process.stdout, self.max_output)
            group.start_soon(read, "err", process.stderr, 65_536)
            await _send(process, payload)
            await process.wait()
            # The program has answered: anything it left running goes with it (a daemon
            # still holding its stdout open would otherwise keep the reads waiting).
            reaper.kill(process.pid)
        return bytes(chunks["out"]), bytes(chunks["err"]), flooded


async def _send(process: Process, payload: bytes) -> None:
    """Write the sample and close stdin; a program that ignores stdin is not an error."""
    if process.stdin is None:
        return
    try:
        await process.stdin.send(payload)
        await process.stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass


async def _reap(process: Process) -> None:
    with anyio.move_on_after(5, shield=True):
        await process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with anyio.CancelScope(shield=True):
                await stream.aclose()


def _classify(
    stdout: bytes, stderr: bytes, code: int | None, flooded: bool, cap: int
) -> TargetOutcome:
    if flooded:
        return _failure(stdout[:cap], stderr, code, f"output exceeded {cap} bytes")
    if code != 0:
        return _failure(stdout, stderr, code, f"exited with code {code}")
    try:
        value: Any = _decode(stdout)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return _failure(stdout, stderr, code, f"stdout is not JSON ({exc})")
    return TargetOutcome("answered", stdout, _JSON, value=value, stderr=stderr, exit_code=code)


def _failure(stdout: bytes, stderr: bytes, code: int | None, why: str) -> TargetOutcome:
    return TargetOutcome(
        "product_failure", stdout, _JSON, failure=why, stderr=stderr, exit_code=code
    )
