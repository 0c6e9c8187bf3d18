"""Resource limits for sandboxed commands, applied by ``prlimit`` inside the sandbox.

``prlimit`` (util-linux) sets its own limits and execs the command, so the limits bind
the sandboxed command and everything it starts, not bubblewrap. Soft and hard limits are
equal, so the command cannot raise them again. The process limit counts the processes
of the sandbox's user in its own user namespace, so a fork bomb stops at it.
"""

from __future__ import annotations

import msgspec


class Limits(msgspec.Struct, frozen=True):
    """Per-process rlimits (``None``: not limited)."""

    cpu_seconds: int | None = 60
    memory_bytes: int | None = 4 * 1024**3  # address space, RLIMIT_AS
    processes: int | None = 256
    file_size_bytes: int | None = 1024**3
    open_files: int | None = 1024

    def prlimit_args(self) -> list[str]:
        """The ``prlimit`` options that set these limits (soft = hard)."""
        pairs = [
            ("cpu", self.cpu_seconds),
            ("as", self.memory_bytes),
            ("nproc", self.processes),
            ("fsize", self.file_size_bytes),
            ("nofile", self.open_files),
        ]
        return [f"--{name}={value}:{value}" for name, value in pairs if value is not None]
