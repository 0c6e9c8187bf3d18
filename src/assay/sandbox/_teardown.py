"""Removing a work folder the sandbox filled, however deep or wide, off the event loop.

``shutil.rmtree`` recurses once per folder level (3,000 nested folders raise
RecursionError) and, called on the loop, stalls every other sample while 100,000 files
go. Here the walk keeps its own stack (a name and a pending list per level, no open file
descriptor per level) and runs in a worker thread. Each folder is opened relative to its
parent without following links, and going back up is checked against the folder's
recorded identity, so a link or a moved folder cannot send the delete outside the tree.
"""

from __future__ import annotations

import contextlib
import os
import stat

import anyio

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


async def remove_tree(path: str) -> None:
    """Remove *path* and everything under it in a worker thread (shielded from
    cancellation: a half-deleted folder is worse than a late one)."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(remove_tree_blocking, path)


def _empty_files(fd: int) -> list[str]:
    """Unlink every non-folder in the folder *fd*; return its subfolders' names."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)  # a folder the sandbox made read-only can still be emptied
    folders = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=fd)
    return folders


def remove_tree_blocking(path: str) -> None:
    """Remove *path* without recursion (see the module docstring); a missing path is fine."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return
    # one frame per level: (name in parent, (dev, ino), subfolders still to remove)
    stack: list[tuple[str, tuple[int, int], list[str]]] = []
    identity = _identity(fd)
    pending = _empty_files(fd)
    try:
        while True:
            if pending:
                name = pending.pop()
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                stack.append((name, identity, pending))
                os.close(fd)
                fd, identity, pending = child, _identity(child), _empty_files(child)
                continue
            if not stack:
                break
            name, parent_identity, pending = stack.pop()
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != parent_identity:
                raise OSError(f"a folder under {path} moved while it was removed")
            os.rmdir(name, dir_fd=fd)
            identity = parent_identity
    finally:
        os.close(fd)
    os.rmdir(path)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError("not a folder")
    return info.st_dev, info.st_ino
