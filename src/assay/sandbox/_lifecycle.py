"""A trial's sandboxes: made for each attempt, filled, set up, and removed after scoring.

The pipeline opens a ``TrialSandboxes`` around each trial (``trial_sandboxes``). A
target that needs sandboxes asks it to ``open`` them when an attempt starts: the
attempt's earlier sandboxes (from a failed attempt) are removed first, so every attempt
starts from the same state. Opening creates each sandbox (``sandbox_create``), places the
sample's files (``sandbox_files``: each path and the SHA-256 of the bytes placed) and
runs its setup script (``sandbox_setup``: what ``sandbox_exec`` records; a non-zero exit
fails the attempt). The sandboxes stay up while the scorers run, then go
(``score_sandbox_cleanup``), unless the run keeps them for debugging (then the event and
the terminal say where). ``max_sandboxes`` caps how many trials hold sandboxes at once:
the sandboxes a scorer makes for itself (``python_tests``, ``run_python``) take the
trial's slot too (``sandbox_slot``), so they count against the same cap.
"""

from __future__ import annotations

import base64
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio

from assay.errors import ConfigError
from assay.evidence import current_recorder
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._recorded import RecordedSandbox, record_exec
from assay.sandbox._spec import SandboxSpec

_BYTES = "application/octet-stream"
SETUP_TIMEOUT = 300.0
"""Seconds a sample's setup script may take."""

KeptCallback = Callable[[str, str], None]
"""Told (sandbox name, host folder) of each sandbox kept with ``--no-sandbox-cleanup``."""

_current: ContextVar[TrialSandboxes | None] = ContextVar("assay_trial_sandboxes", default=None)


class TrialSandboxes:
    """The sandboxes of one trial (see the module docstring)."""

    def __init__(
        self,
        limiter: anyio.CapacityLimiter | None = None,
        cleanup: bool = True,
        on_kept: KeptCallback | None = None,
    ) -> None:
        self.limiter = limiter
        self.cleanup = cleanup
        self.on_kept = on_kept
        self.environments: dict[str, SandboxEnvironment] = {}
        self._made: list[tuple[str, SandboxEnvironment]] = []
        self._elsewhere: list[dict[str, Any]] = []  # see ``removed_elsewhere``
        self._holding = False

    async def open(
        self,
        specs: tuple[SandboxSpec, ...],
        files: Mapping[str, str] | None = None,
        setup: str | None = None,
        base: Path | None = None,
    ) -> Mapping[str, SandboxEnvironment]:
        """Fresh sandboxes for an attempt, with *files* placed and *setup* run in the
        first; paths in *files* are read relative to *base* (the dataset's folder)."""
        await self.close()
        if self.limiter is not None:
            await self.limiter.acquire_on_behalf_of(self)
            self._holding = True
        for spec in specs:
            await self._create(spec)
        first = next(iter(self.environments.values()))
        name = next(iter(self.environments))
        if files:
            await _place_files(first, name, files, base)
        if setup:
            await _run_setup(first, name, setup)
        return self.environments

    def removed_elsewhere(self, cleanups: list[dict[str, Any]]) -> None:
        """Note sandboxes an attempt of this trial made and removed in another process
        (a cluster worker, where the attempt and its scorers ran): their
        ``sandbox_cleanup`` data, recorded when this trial's sandboxes next close, where
        a local run records its own removal."""
        self._elsewhere.extend(cleanups)

    async def close(self) -> None:
        """Remove every sandbox (or keep it, when the run says so) and free the slot."""
        made, self._made = self._made, []
        elsewhere, self._elsewhere = self._elsewhere, []
        self.environments = {}
        try:
            for name, environment in made:
                await self._close_one(name, environment)
            for data in elsewhere:
                if data.get("kept") is not None and self.on_kept is not None:
                    self.on_kept(data["sandbox"], data["kept"])
                _record("sandbox_cleanup", data)
        finally:
            if self._holding and self.limiter is not None:
                self.limiter.release_on_behalf_of(self)
                self._holding = False

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot of the cap for sandboxes made outside ``open`` (a scorer's own)
        inside the block: none more when the trial holds one already (its sandboxes
        stay up while it is scored), and none when the run sets no cap."""
        if self.limiter is None or self._holding:
            yield
            return
        borrower = object()  # each block its own: two scorers' runs are two slots
        await self.limiter.acquire_on_behalf_of(borrower)
        try:
            yield
        finally:
            self.limiter.release_on_behalf_of(borrower)

    async def _create(self, spec: SandboxSpec) -> None:
        environment = spec.make()
        started = time.monotonic()
        await environment.create()
        self._made.append((spec.name, environment))
        self.environments[spec.name] = RecordedSandbox(environment, spec.name)
        seconds = round(time.monotonic() - started, 4)
        _record(
            "sandbox_create", {"sandbox": spec.name, "provider": spec.provider, "seconds": seconds}
        )

    async def _close_one(self, name: str, environment: SandboxEnvironment) -> None:
        started = time.monotonic()
        kept = None
        with anyio.CancelScope(shield=True):  # a cancelled trial still removes its sandbox
            if self.cleanup:
                await environment.cleanup()
            else:
                kept = getattr(environment, "folder", None) or ""
                if self.on_kept is not None:
                    self.on_kept(name, kept)
        seconds = round(time.monotonic() - started, 4)
        _record("sandbox_cleanup", {"sandbox": name, "kept": kept, "seconds": seconds})


@asynccontextmanager
async def trial_sandboxes(
    limiter: anyio.CapacityLimiter | None = None,
    cleanup: bool = True,
    on_kept: KeptCallback | None = None,
) -> AsyncIterator[TrialSandboxes]:
    """The sandboxes of the trial run inside the block, removed when it ends."""
    sandboxes = TrialSandboxes(limiter, cleanup, on_kept)
    token = _current.set(sandboxes)
    try:
        yield sandboxes
    finally:
        _current.reset(token)
        await sandboxes.close()


@asynccontextmanager
async def sandbox_slot() -> AsyncIterator[None]:
    """Inside the block, the current trial holds a slot of the run's ``max_sandboxes``
    (see ``TrialSandboxes.slot``); outside a trial, or with no cap, nothing is held."""
    sandboxes = _current.get()
    if sandboxes is None:
        yield
        return
    async with sandboxes.slot():
        yield


def current_trial_sandboxes() -> TrialSandboxes | None:
    """The sandboxes of the trial running in this context, if the pipeline opened them."""
    return _current.get()


@contextmanager
def no_trial_sandboxes() -> Iterator[None]:
    """Hide the trial's sandboxes inside the block (a sub-evaluation starts its own)."""
    token = _current.set(None)
    try:
        yield
    finally:
        _current.reset(token)


def _record(kind: str, data: dict[str, Any]) -> None:
    recorder = current_recorder()
    if recorder is not None:
        recorder.record_if_open(kind, data)


async def _place_files(
    environment: SandboxEnvironment, name: str, files: Mapping[str, str], base: Path | None
) -> None:
    placed: dict[str, str] = {}
    recorder = current_recorder()
    for path, value in files.items():
        contents = await anyio.to_thread.run_sync(file_contents, path, value, base)
        await environment.write_file(path, contents)
        if recorder is not None:
            placed[path] = recorder.store.put(contents, _BYTES).sha256
    _record("sandbox_files", {"sandbox": name, "files": placed})


async def _run_setup(environment: SandboxEnvironment, name: str, setup: str) -> None:
    started = time.monotonic()
    command = ["bash", "-c", setup]
    inner = environment.inner if isinstance(environment, RecordedSandbox) else environment
    result = await inner.exec(command, timeout=SETUP_TIMEOUT)
    recorder = current_recorder()
    if recorder is not None:
        seconds = time.monotonic() - started
        record_exec(recorder, name, command, None, None, None, result, seconds, "sandbox_setup")
    if not result.success:
        raise SetupFailed(name, result.returncode, result.stderr)


class SetupFailed(Exception):
    """The sample's setup script failed: the attempt errors (the trial is not run)."""

    def __init__(self, name: str, code: int, stderr: str) -> None:
        tail = stderr.strip().splitlines()[-1:] or [""]
        super().__init__(f"setup script exited {code} in sandbox {name!r}: {tail[0][:200]}")


def file_contents(path: str, value: str, base: Path | None) -> bytes:
    """The bytes a sample file holds: a ``data:`` URI decoded, a file of the dataset's
    folder read (a one-line value naming a file there), or the value itself as text."""
    if value.startswith("data:"):
        return _data_uri(value)
    if base is not None and "\n" not in value and 0 < len(value) < 4096:
        candidate = base / value
        try:
            if candidate.is_file():
                return candidate.read_bytes()
        except OSError as exc:
            raise ConfigError(
                "sandbox.file_missing", path=path, source=str(candidate), reason=exc.strerror
            ) from None
    return value.encode("utf-8")


def _data_uri(value: str) -> bytes:
    header, _, payload = value.partition(",")
    if header.endswith(";base64"):
        return base64.b64decode(payload)
    return urllib.parse.unquote_to_bytes(payload)


def as_data_uri(contents: bytes) -> str:
    """*contents* as a ``data:`` URI: how a sample keeps bytes in its JSON record."""
    return "data:application/octet-stream;base64," + base64.b64encode(contents).decode()
