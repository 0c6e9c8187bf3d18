"""Output kept up to a cap: the start and the end, and how much was cut between.

A runaway print in model code must not fill the memory or the reports, but a reviewer
wants to see both how a program started and how it died.
"""

from __future__ import annotations


class Capped:
    """The first and last ``cap // 2`` bytes of a stream, and how many were cut between."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: -self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes cut ...]\n" if cut else ""
        return self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")
