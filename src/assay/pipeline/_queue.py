"""The run's work queue: the plan's trials, then the ones ``retry_on_error`` sent back."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import msgspec

from assay.evidence import TrialRecorder
from assay.plan import Trial
from assay.run import AttemptRecord


class Requeued(msgspec.Struct):
    """A trial sent to the back of the queue by ``retry_on_error``, unsealed."""

    trial: Trial
    recorder: TrialRecorder
    attempts: list[AttemptRecord]
    tries: int


class WorkQueue:
    """The plan's trials, then whatever was re-queued while they ran."""

    def __init__(self, planned: Iterator[Trial]) -> None:
        self._planned = planned
        self.later: deque[Requeued] = deque()
        self.stopped = False

    def stop(self) -> None:
        """Hand out nothing more (a sequential gate has decided): trials in flight finish,
        the rest are never started."""
        self.stopped = True

    def __iter__(self) -> WorkQueue:
        return self

    def __next__(self) -> Trial | Requeued:
        if self.stopped:
            raise StopIteration
        for trial in self._planned:
            return trial
        if self.later:
            return self.later.popleft()
        raise StopIteration
