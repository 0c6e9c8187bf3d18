"""What both built-in providers share: a host temp folder the sandbox works in.

Files are read and written from the host side of that folder (no process started), with
no symlink followed; the folder is removed off the event loop.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import anyio

from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._files import read_bytes, relative_parts, write_bytes
from assay.sandbox._result import OUTPUT_LIMIT
from assay.sandbox._teardown import remove_tree


class WorkFolderSandbox(SandboxEnvironment):
    """A sandbox whose state is one host folder, seen inside at ``mount``."""

    def __init__(self, *, output_limit: int = OUTPUT_LIMIT) -> None:
        self.output_limit = output_limit
        self._folder: str | None = None
        # who owns the work folder and what the host writes there (None: the harness)
        self.owner: tuple[int, int] | None = None

    @property
    def mount(self) -> str:
        """Where the sandboxed commands see the work folder."""
        return self.folder

    @property
    def folder(self) -> str:
        """The host path of the work folder (created by ``create``)."""
        if self._folder is None:
            raise RuntimeError("the sandbox is not created (use `async with` or create())")
        return self._folder

    async def create(self) -> None:
        self._folder = await anyio.to_thread.run_sync(_make_folder, self.owner)

    async def cleanup(self) -> None:
        folder, self._folder = self._folder, None
        if folder is not None:
            await remove_tree(folder)

    async def read_file(self, path: str, text: bool = True) -> Any:
        parts = relative_parts(path, self.mount)
        data = await anyio.to_thread.run_sync(read_bytes, self.folder, parts)
        return data.decode("utf-8") if text else data

    async def write_file(self, path: str, contents: str | bytes) -> None:
        parts = relative_parts(path, self.mount)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        await anyio.to_thread.run_sync(write_bytes, self.folder, parts, data, self.owner)


def _make_folder(owner: tuple[int, int] | None) -> str:
    folder = tempfile.mkdtemp(prefix="assay-sandbox-")
    if owner is not None:
        os.chown(folder, *owner)
    return folder
