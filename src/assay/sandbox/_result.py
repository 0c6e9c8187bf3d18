"""What one command run in a sandbox gave back, with its output capped."""

from __future__ import annotations

import msgspec

OUTPUT_LIMIT = 1024 * 1024  # bytes kept of each of stdout and stderr
TRUNCATED_MARKER = "\n[assay: output truncated at {limit} bytes]\n"


class ExecResult(msgspec.Struct, frozen=True):
    """The result of ``SandboxEnvironment.exec`` (Inspect's shape, plus ``timed_out``).

    ``success`` is ``returncode == 0``; a command killed by signal N has returncode
    128 + N on every provider (bwrap cannot report it otherwise); one killed for its
    timeout has ``timed_out=True``, ``success=False`` and returncode 137 (SIGKILL).
    """

    success: bool
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


class CappedOutput:
    """Bytes read from a stream, keeping the first *limit* and counting the rest, so a
    flood from the sandbox costs the harness no memory beyond the cap."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Keep what fits under the limit, count what does not."""
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        """The kept bytes as text (invalid UTF-8 replaced), with a marker if cut."""
        decoded = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            decoded += TRUNCATED_MARKER.format(limit=self.limit)
        return decoded
