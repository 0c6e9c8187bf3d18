"""Opening a run's file only if it is a regular file: a run folder is a stranger's input.

A run handed over may hold, under a name assay writes, a link to ``/dev/zero`` (reading
it whole never ends) or a named pipe (opening it waits for a writer forever). Every
reader of evidence opens through ``open_plain`` so such a file is an ``OSError``, which
the readers already report as a missing or unreadable file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


def open_plain(path: Path) -> BinaryIO:
    """*path* opened for reading if it is a regular file, links followed. A pipe or a
    device is refused (``OSError``) before a byte is read: reading a link to
    ``/dev/zero`` would never end, and a pipe would wait forever (hence ``O_NONBLOCK``
    on the open itself). A folder is ``IsADirectoryError``, as with ``open``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe or a device)", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
