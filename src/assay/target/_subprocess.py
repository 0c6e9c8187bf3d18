"""Run a program per sample: argv (never a shell), the sample as JSON on stdin, JSON out.

Each call runs in a scratch folder of its own, made for it and removed after it:
``work/`` (empty, the program's working directory) and, for a ``script`` target,
``program/`` holding a fresh copy of the pinned script, which is what runs. The spec's
folder (and the dataset's expected answers in it) is never the working directory, and
a script that rewrites itself, or the file it was copied from, changes nothing for the
next call: the bytes were read once, checked against the spec's digest, and kept. The
environment is an allow-list (``DEFAULT_ENVIRONMENT`` plus the target's ``env``), so
assay's own secrets reach a program only when the spec names them.

The program runs in its own session, so on timeout, on an output flood, or once it has
answered, its whole process group is killed, and with it every process that inherited
its tag (see ``assay._reap``): a target cannot leave children behind, not even daemons.
Failing to start and timing out are infrastructure errors; a non-zero exit, output that
is not JSON or too much output are product failures, recorded and never retried.

With ``sandbox: bwrap`` the same call runs isolated (see ``_isolated``): the scratch
folder's ``work/`` and ``program/`` are the only host folders it sees.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, Process

from assay._digest import fast_json
from assay._reap import Reaper
from assay._spawn import open_process
from assay.dataset import Sample
from assay.errors import ConfigError
from assay.spec import PYTHON, TargetSpec, resolve_inside
from assay.target._base import InfrastructureError, TargetOutcome, target_payload

if TYPE_CHECKING:  # the sandbox machinery loads only for a target that asks for it
    from assay.sandbox._bwrap import BwrapStatus
    from assay.target._isolated import IsolatedProgram

_JSON = "application/json"
_decode = msgspec.json.Decoder().decode

DEFAULT_ENVIRONMENT = ("PATH", "HOME", "LANG", "TMPDIR")
"""What a program gets of assay's environment without declaring ``env`` (when set)."""


class PinnedScript(msgspec.Struct, frozen=True):
    """A script's bytes as pinned by the spec, and the mode bits of the original file."""

    name: str
    data: bytes
    mode: int


class SubprocessTarget:
    """A program under test, started once per attempt, each time in a new scratch folder."""

    def __init__(self, spec: TargetSpec, root: Path) -> None:
        self.id = spec.id
        self.argv = [sys.executable if part == PYTHON else part for part in spec.argv]
        self.script = _pinned_script(spec, root) if spec.script else None
        self.allowed: Mapping[str, str | None] = spec.env or {}
        self.timeout = spec.timeout
        self.max_output = spec.max_output_bytes
        self.isolated = self._isolated(spec) if spec.sandbox == "bwrap" else None

    def _isolated(self, spec: TargetSpec) -> IsolatedProgram:
        from assay.target._isolated import IsolatedProgram

        return IsolatedProgram(spec, self.script.name if self.script else None)

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Run the program on *sample* and classify what happened."""
        payload = fast_json(target_payload(sample))
        with anyio.CancelScope(shield=True):  # made, so always removed in the finally below
            scratch = await anyio.to_thread.run_sync(self.make_scratch)
        try:
            return await self._run(scratch, payload)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_clear, scratch)

    async def _run(self, scratch: Path, payload: bytes) -> TargetOutcome:
        reaper = Reaper()
        with self.how_to_start(scratch, reaper) as (argv, options, status):
            process = await self._open(argv, options)
            try:
                with anyio.fail_after(self.timeout):
                    stdout, stderr, over = await self._exchange(process, reaper, payload)
            except TimeoutError:
                why = f"no answer within {self.timeout:g} s"
                raise InfrastructureError("timeout", why) from None
            finally:
                reaper.kill(process.pid)
                await _reap(process)
            # killed for its output, it did run: bwrap just had no exit code to report
            if status is not None and not over and not status.command_ran():
                from assay.sandbox._bwrap import bwrap_failure

                why = bwrap_failure(stderr.decode("utf-8", errors="replace"))
                raise InfrastructureError("failed_to_start", why)
        flooded = "out" in over
        return _classify(stdout, stderr, process.returncode, flooded, self.max_output)

    async def _open(self, argv: list[str], options: dict[str, Any]) -> Process:
        try:
            return await open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                **options,
            )
        except OSError as exc:
            raise InfrastructureError("failed_to_start", f"{self.argv[0]}: {exc}") from None

    @contextlib.contextmanager
    def how_to_start(
        self, scratch: Path, reaper: Reaper
    ) -> Iterator[tuple[list[str], dict[str, Any], BwrapStatus | None]]:
        """The argv and ``open_process`` options of one call: on the host in ``work/``, or
        through bwrap (its options in a descriptor open until the block ends, and its
        status, which tells whether the program ran at all)."""
        if self.isolated is None:
            environment = reaper.environment(self._environment())
            yield self._argv(scratch), {"cwd": scratch / "work", "env": environment}, None
            return
        with self.isolated.launch(scratch).started_with_status() as (argv, fds, status):
            yield argv, {"cwd": None, "env": {}, "pass_fds": fds}, status

    def make_scratch(self) -> Path:
        """A new private folder: an empty ``work/`` and, for a script, a fresh copy. A
        folder that cannot be made (a full disk) is an infrastructure failure."""
        try:
            scratch = Path(tempfile.mkdtemp(prefix="assay-call-"))
        except OSError as exc:
            raise InfrastructureError("failed_to_start", f"scratch folder: {exc}") from None
        try:
            (scratch / "work").mkdir()
            if self.script is not None:
                (scratch / "program").mkdir()
                copy = scratch / "program" / self.script.name
                copy.write_bytes(self.script.data)
                copy.chmod(self.script.mode)
            if self.isolated is not None:
                self.isolated.hand_over(scratch)
        except OSError as exc:
            remove_scratch(scratch)
            raise InfrastructureError("failed_to_start", f"scratch folder: {exc}") from None
        return scratch

    def _argv(self, scratch: Path) -> list[str]:
        """The argv, with the script (argv[0], or argv[1] after Python) the fresh copy."""
        if self.script is None:
            return self.argv
        copy = str(scratch / "program" / self.script.name)
        at = 1 if self.argv[0] == sys.executable else 0
        return [*self.argv[:at], copy, *self.argv[at + 1 :]]

    def _environment(self) -> dict[str, str]:
        """The allow-list: the defaults and the names the spec passes through, taken from
        assay's environment now, and the values the spec writes."""
        chosen: dict[str, str] = {}
        for name in (*DEFAULT_ENVIRONMENT, *self.allowed):
            value = self.allowed.get(name)
            if value is None:
                value = os.environ.get(name)
            if value is not None:
                chosen[name] = value
        return chosen

    async def _exchange(
        self, process: Process, reaper: Reaper, payload: bytes
    ) -> tuple[bytes, bytes, set[str]]:
        """Send the sample, read both outputs; the names of those that passed their cap
        (the program was killed for it then, before it exited by itself)."""
        chunks: dict[str, bytearray] = {"out": bytearray(), "err": bytearray()}
        over: set[str] = set()

        async def read(name: str, stream: ByteReceiveStream | None, cap: int) -> None:
            if stream is None:
                return
            buffer = chunks[name]
            async for chunk in stream:
                buffer += chunk
                if len(buffer) > cap:
                    over.add(name)
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
        return bytes(chunks["out"]), bytes(chunks["err"]), over


def _pinned_script(spec: TargetSpec, root: Path) -> PinnedScript:
    """Read the script once and check it is the file the spec pinned; these bytes are what
    every call runs, whatever happens to the file afterwards."""
    assert spec.script is not None
    field = f"targets[{spec.id}].script"
    path = resolve_inside(root, spec.script, field)
    data = path.read_bytes()
    if "sha256:" + hashlib.sha256(data).hexdigest() != spec.digest:
        raise ConfigError("spec.script_changed", field=field, value=spec.script)
    return PinnedScript(name=path.name, data=data, mode=path.stat().st_mode & 0o777)


def _clear(scratch: Path) -> None:
    """End whatever still works in the call's scratch folder, then remove the folder."""
    kill_working_in(scratch)
    remove_scratch(scratch)


def kill_working_in(folder: Path) -> int:
    """SIGKILL every process whose working directory is in *folder*; how many were found.

    The process group and the ``ASSAY_PROCESS_TAG`` sweep miss a daemon that left the
    group and cleared its environment (``setsid env -i ...``); one that did not also leave
    the scratch folder is found here (Linux only: ``/proc/PID/cwd``).
    """
    if not os.path.isdir("/proc"):
        return 0
    inside, prefix = str(folder), f"{folder}/"
    killed = 0
    for _ in range(3):  # one forking while it is found is found on the next round
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) != os.getpid():
                with contextlib.suppress(OSError):
                    cwd = os.readlink(f"/proc/{name}/cwd")
                    if cwd == inside or cwd.startswith(prefix):
                        found.append(int(name))
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed += len(found)
        if not found:
            break
    return killed


def remove_scratch(scratch: Path) -> None:
    """Remove a call's scratch folder, whatever the program left in it (folders it made
    unwritable, nesting too deep for a recursive walk: ``rm -rf`` then)."""
    with contextlib.suppress(RecursionError):
        shutil.rmtree(scratch, ignore_errors=True)
    if scratch.exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(scratch)], check=False)


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
    """Wait (at most 5 s) for the killed program, then close its pipes with their
    transports (``Process.aclose``): a pipe left unread (an output flood) otherwise
    stays open until it is collected, which uvloop reports as an unclosed resource."""
    with anyio.move_on_after(5, shield=True):
        await process.wait()
    with anyio.move_on_after(1, shield=True):
        await process.aclose()


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
