"""Reading and writing files in a work folder the sandbox controls, from the host.

The sandbox may have replaced any folder or file with a symlink (to ``/etc/shadow``, to
the run directory): followed on the host, that link would read or overwrite the host's
file. So every path is opened one component at a time, relative to the folder above it,
with ``O_NOFOLLOW``: a link anywhere on the path is an error, never followed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def relative_parts(path: str, mount: str) -> list[str]:
    """The components of *path* below the work folder; *path* is relative to it or
    absolute under *mount* (where the sandbox sees the folder). ``..`` is refused."""
    pure = PurePosixPath(path)
    if pure.is_absolute():
        try:
            pure = pure.relative_to(mount)
        except ValueError:
            raise ValueError(f"{path!r} is outside the sandbox's work folder {mount}") from None
    parts = [part for part in pure.parts if part not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"{path!r} does not name a file inside the work folder")
    return parts


Owner = tuple[int, int] | None  # (uid, gid) to give what is created, or None to leave it


def _open_parent(root: str, folders: list[str], create: bool, owner: Owner = None) -> int:
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in folders:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                    if owner is not None:
                        os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(root: str, parts: list[str]) -> bytes:
    """The contents of ``root/parts``, no symlink followed."""
    parent = _open_parent(root, parts[:-1], create=False)
    try:
        # O_NONBLOCK: a FIFO planted by the sandbox must not hang the worker thread
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(parts[-1], flags, dir_fd=parent)
    finally:
        os.close(parent)
    _require_regular(fd, parts)
    with open(fd, "rb") as handle:
        return handle.read()


def write_bytes(root: str, parts: list[str], data: bytes, owner: Owner = None) -> None:
    """Write ``root/parts`` (making its folders, given to *owner*), no symlink followed."""
    parent = _open_parent(root, parts[:-1], create=True, owner=owner)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(parts[-1], flags, 0o644, dir_fd=parent)
    finally:
        os.close(parent)
    _require_regular(fd, parts)
    os.ftruncate(fd, 0)
    with open(fd, "wb") as handle:
        if owner is not None:
            os.fchown(fd, *owner)
        handle.write(data)


def _require_regular(fd: int, parts: list[str]) -> None:
    """Close *fd* and raise unless it is a regular file (not a FIFO, device or socket)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{'/'.join(parts)} is not a regular file")
