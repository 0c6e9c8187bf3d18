"""How far a run has got, told every so often to whoever asked (the CLI's progress line).

Nothing is counted for it on the hot path: a report is read off the rows the run keeps
for its report anyway, every ``PROGRESS_EVERY`` seconds and once more at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import msgspec

if TYPE_CHECKING:
    from assay.pipeline._run import _Run

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


def progress_of(run: _Run, *, final: bool = False) -> Progress:
    """How far the run has got (every trial with a report row is finished) and how
    it is going, read off the counters the run keeps for its report anyway."""
    done = run.rows.kept() + run.rows.omitted
    kept = len(run.point.finished) if run.point is not None else 0
    elapsed = time.time() - run.started
    first = next(iter(run.scorers), None)
    rates = {}
    for target_id in run.metrics.states:
        statuses = run.metrics.scores.get((target_id, first or ""))
        if statuses:
            rates[target_id] = (statuses["passed"], sum(statuses.values()))
    errors = run.errors.errored + sum(
        states["blocked"] + states["invalid"] for states in run.metrics.states.values()
    )
    usage = run.rows.usage_total()
    return Progress(
        run.spec.evaluation,
        done,
        run.shard_size,
        elapsed,
        final,
        kept,
        pass_rates=rates,
        errors=errors,
        retries=run.retries,
        tokens=usage.input_tokens + usage.output_tokens,
        cost=usage.cost,
        workers=run.workers() if run.workers is not None else None,
    )
