"""The interface every sandbox provider implements (Inspect's ``SandboxEnvironment``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Literal, overload

from assay.sandbox._result import ExecResult


class SandboxEnvironment(ABC):
    """One sample's sandbox: a work folder and a way to run commands in it.

    Use it as an async context manager: entering creates it, leaving removes it and
    everything it started. Commands are argv lists, never shell strings.
    """

    async def __aenter__(self) -> SandboxEnvironment:
        await self.create()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.cleanup()

    def check(self) -> None:
        """Fail fast, before the run, when the provider cannot work here (a program it
        needs is missing): a ``ConfigError`` naming what to install. Nothing by default."""
        return None

    @abstractmethod
    async def create(self) -> None:
        """Make the work folder (and whatever else the provider needs)."""

    @abstractmethod
    async def cleanup(self) -> None:
        """Kill what is left running and remove the work folder, off the event loop."""

    @abstractmethod
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        user: str | None = None,
    ) -> ExecResult:
        """Run *cmd* (an argv list) and return its exit code and capped output."""

    @overload
    async def read_file(self, path: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, path: str, text: Literal[False]) -> bytes: ...

    @abstractmethod
    async def read_file(self, path: str, text: bool = True) -> str | bytes:
        """The contents of *path* (relative to the work folder, or absolute inside it)."""

    @abstractmethod
    async def write_file(self, path: str, contents: str | bytes) -> None:
        """Write *contents* to *path* in the work folder, making parent folders."""
