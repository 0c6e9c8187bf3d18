"""What a Dask worker runs for assay: a chunk of target calls, on one event loop.

Targets hold things bound to an event loop (an HTTP client's connections, a
subprocess target's reaper), so a worker keeps one loop, in a daemon thread, for its
whole life, and builds each target once, from its spec, on that loop. A chunk's calls
run there at once; each records into its own ``DetachedRecorder``, whose ops go back
with the answer for the driver to replay.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.from_thread import BlockingPortal

from assay.dataset import Sample
from assay.evidence import DetachedRecorder
from assay.spec import TargetSpec
from assay.target import InfrastructureError, Target, TargetOutcome, build_target


class Call(msgspec.Struct, frozen=True):
    """One target call: the sample, and where the trial's recorder stood when sent."""

    trial_id: str
    sample: Sample
    epoch: int
    last: int
    parent: int | None


class Reply(msgspec.Struct):
    """What came of a call: its recorded ops, and an outcome or an infrastructure
    failure (``reason``, ``detail``, ``retry_after``, ``status``)."""

    ops: list[tuple[Any, ...]]
    outcome: TargetOutcome | None = None
    infra: tuple[str, str, float | None, int | None] | None = None


_start_lock = threading.Lock()
_portal: BlockingPortal | None = None
_targets: dict[tuple[bytes, str], Target] = {}  # touched only on the portal's loop


def call_chunk(target: bytes, root: str, calls: list[Call]) -> list[Reply]:
    """Put *calls* to the target *target* (its spec as JSON; *root*, its spec's folder)
    at once, and return their replies in order. Dask runs this in a worker thread."""
    return _event_loop().call(_call_all, target, root, calls)


async def _call_all(target: bytes, root: str, calls: list[Call]) -> list[Reply]:
    built = _targets.get((target, root))
    if built is None:
        spec = msgspec.json.decode(target, type=TargetSpec)
        built = _targets[(target, root)] = build_target(spec, Path(root))
    replies: list[Reply] = [Reply([])] * len(calls)

    async def one(index: int, call: Call) -> None:
        recorder = DetachedRecorder(call.trial_id, call.last, call.parent)
        with recorder.bound():
            try:
                outcome = await built.call(call.sample, call.epoch)
            except InfrastructureError as exc:
                failure = (exc.reason, exc.detail, exc.retry_after, exc.status)
                replies[index] = Reply(recorder.ops, infra=failure)
                return
        replies[index] = Reply(recorder.ops, outcome)

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    return replies


def _event_loop() -> BlockingPortal:
    """The worker's loop, started on first use in a daemon thread (a worker that is
    closed does not wait for it)."""
    global _portal
    with _start_lock:
        if _portal is None:
            started: queue.Queue[BlockingPortal] = queue.Queue()

            async def serve() -> None:
                async with BlockingPortal() as portal:
                    started.put(portal)
                    await portal.sleep_until_stopped()

            thread = threading.Thread(target=anyio.run, args=(serve,), daemon=True)
            thread.name = "assay-cluster-loop"
            thread.start()
            _portal = started.get()
    return _portal
