"""Recording a trial's events away from its run (on a cluster worker), to be replayed.

A run's driver is the single writer of its evidence. A target call sent to a Dask
worker records what it does (``record_event``, a model's calls and their artifacts)
into a ``DetachedRecorder``; the list travels back with the answer and ``replay_detached``
records it, in order, into the trial's own recorder. The evidence is then what the
call would have left had it run in the driver: same events, same parents, same
artifacts, chained into the one log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.evidence._log import EventLog
from assay.evidence._recorder import TrialRecorder
from assay.evidence._store import ArtifactRef, ArtifactStore

Op = tuple[Any, ...]
"""``("event", n, parent, kind, data)``, ``("blob", data)`` (bytes put in the
artifact store) or ``("name", name, sha256)`` (an artifact the bundle names)."""


class _KeptStore(ArtifactStore):
    """A store that writes nothing: each put is kept as an op, for the driver's store."""

    def __init__(self, ops: list[Op]) -> None:
        super().__init__(Path("."), write=False)
        self._ops = ops

    def put_digest(self, data: bytes) -> str:
        """Keep *data* as an op (``put`` comes here too: a store keeps bytes by digest,
        not their media type, so the op does not carry it)."""
        self._ops.append(("blob", data))
        return super().put_digest(data)


class DetachedRecorder(TrialRecorder):
    """A recorder that keeps what it is given (``ops``) instead of logging it.

    It starts numbering after *last* with *parent* as the open scope, the driver's
    recorder at the moment the call was sent, so the numbers usually match the
    driver's; ``replay_detached`` maps them anyway.
    """

    __slots__ = ("ops",)

    def __init__(self, trial_id: str, last: int, parent: int | None) -> None:
        self.ops: list[Op] = []
        super().__init__(EventLog([]), _KeptStore(self.ops), trial_id)
        self.last, self.parent = last, parent

    def record(self, kind: str, data: dict[str, Any], parent: int | None = -1) -> int:
        """Keep the event as an op (numbered and parented as ``record`` would); the
        base's ``record_if_open`` comes here too, under the same re-entrant lock."""
        with self._lock:
            n = self.last = self.last + 1
            self.ops.append(("event", n, self.parent if parent == -1 else parent, kind, data))
            return n

    def sampled(self, data: dict[str, Any]) -> int | None:
        """A model's call, kept through ``record`` as every other event."""
        return self.record_if_open("sampling", data)

    def artifact(self, name: str, data: bytes, media: str) -> ArtifactRef:
        ref = super().artifact(name, data, media)  # its put is kept as a blob
        self.ops.append(("name", name, ref.sha256))
        return ref


def replay_detached(ops: list[Op], recorder: TrialRecorder) -> None:
    """Record *ops* (a ``DetachedRecorder``'s) into *recorder*, in their order; a parent
    among the replayed events is renumbered, any other (the attempt) kept."""
    numbers: dict[int | None, int | None] = {}
    for op in ops:
        if op[0] == "event":
            _, n, parent, kind, data = op
            numbers[n] = recorder.record(kind, data, parent=numbers.get(parent, parent))
        elif op[0] == "blob":
            recorder.store.put_digest(op[1])
        else:
            recorder.artifacts[op[1]] = op[2]
