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
    it is the last one.

    Then how the run is going so far: *pass_rates* by target, ``(passed, scored)`` of
    the first scorer; *errors*, trials that ended blocked, invalid or in error; *retries*,
    attempts after a trial's first (this process's trials); *tokens* and *cost* (USD,
    ``None`` when a model has no price) of the targets' model calls; *workers*, the
    workers of the Dask cluster the calls go to (``None``: a run without ``--cluster``).
    """

    evaluation: str
    done: int
    planned: int
    elapsed: float
    final: bool = False
    kept: int = 0
    pass_rates: dict[str, tuple[int, int]] = {}
    errors: int = 0
    retries: int = 0
    tokens: int = 0
    cost: float | None = 0.0
    workers: int | None = None

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
