"""Inspect's small helpers for solvers and tools: ``subprocess`` (a program on the
host, awaited), ``collect`` (coroutines run at once, results in order) and
``resource`` (a prompt kept in a file or given inline)."""

from __future__ import annotations

import subprocess as _subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, Literal, TypeVar

from assay.sandbox import ExecResult

T = TypeVar("T")


async def subprocess(
    args: str | list[str],
    text: bool = True,
    input: str | bytes | None = None,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    capture_output: bool = True,
    timeout: float | None = None,
) -> ExecResult:
    """Run *args* on the host (a list: no shell; a string is split on spaces as one
    program and its arguments, never given to a shell) and return its ``ExecResult``.
    Past *timeout* seconds it is killed: ``timed_out``, returncode 137."""
    import os

    import anyio

    argv = args.split() if isinstance(args, str) else list(args)
    data = input.encode() if isinstance(input, str) else input
    pipe = _subprocess.PIPE if capture_output else None
    merged_env = {**os.environ, **env} if env else None
    with anyio.move_on_after(timeout) as scope:
        done = await anyio.run_process(
            argv, input=data, stdout=pipe, stderr=pipe, cwd=cwd, env=merged_env, check=False
        )
    if scope.cancelled_caught:
        return ExecResult(False, 137, "", f"timed out after {timeout:g} s", timed_out=True)

    def shown(raw: bytes | None) -> str:
        return (raw or b"").decode("utf-8", errors="replace") if text else repr(raw or b"")

    code = done.returncode
    return ExecResult(code == 0, code, shown(done.stdout), shown(done.stderr))


async def collect(*tasks: Awaitable[T]) -> list[T]:
    """Await *tasks* at once and return their results in the order given; the first
    error cancels the others and is raised."""
    import anyio

    results: list[Any] = [None] * len(tasks)

    async def run(index: int, task: Awaitable[T]) -> None:
        results[index] = await task

    async with anyio.create_task_group() as group:
        for index, task in enumerate(tasks):
            group.start_soon(run, index, task)
    return results


def resource(resource: str, type: Literal["auto", "file"] = "auto", encoding: str = "utf-8") -> str:
    """The text of the file *resource* names, or (with ``type="auto"``, when no such
    file exists) *resource* itself: a prompt may live in a file or inline.

    Raises:
        FileNotFoundError: ``type="file"`` and there is no such file.
    """
    path = Path(resource).expanduser()
    if type == "file" or (len(resource) < 4096 and "\n" not in resource and path.is_file()):
        return path.read_text(encoding=encoding)
    return resource
