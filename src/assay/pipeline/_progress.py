"""How far a run has got, told every so often to whoever asked (the CLI's progress line).

Nothing is counted for it on the hot path: a report is read off the rows the run keeps
for its report anyway, every ``PROGRESS_EVERY`` seconds and once more at the end.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import msgspec

PROGRESS_EVERY = 0.5


class Progress(msgspec.Struct, frozen=True):
    """One report: trials finished of those planned (*kept*, those a resume found
    finished, included), seconds since this process started on the run, and whether
    it is the last one."""

    evaluation: str
    done: int
    planned: int
    elapsed: float
    final: bool = False
    kept: int = 0

    @property
    def rate(self) -> float:
        """Trials finished per second by this process (the kept ones took no time)."""
        return (self.done - self.kept) / self.elapsed if self.elapsed > 0 else 0.0


ProgressCallback = Callable[[Progress], None]


async def report_progress(
    read: Callable[[], Progress], callback: ProgressCallback, every: float = PROGRESS_EVERY
) -> None:
    """Call *callback* with a fresh report every *every* seconds, until cancelled."""
    while True:
        await anyio.sleep(every)
        callback(read())
