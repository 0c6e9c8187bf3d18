"""Calls in chunks to a Dask cluster's workers, and the watch over that cluster.

Calls waiting at the same moment go out together, as one Dask task of up to ``CHUNK``
calls: a task costs the scheduler about 2.7 ms here (1,000 tiny tasks took 2.7 s on a
two-worker ``LocalCluster``), far more than a quick target's answer. No chunk waits
for its slowest call: the worker answers with what is done and keeps the stragglers
running (``_cluster_worker``); each straggler's own trial then fetches its reply with a
``collect`` task pinned to that worker. A worker that dies mid-chunk has its chunk run
again elsewhere by Dask; the driver takes each call's first reply only, so nothing is
recorded twice. A chunk whose workers keep dying is an infrastructure failure of each
call in it: retried by the spec's retry policy, then the trial is blocked.

Losing the cluster itself is not the targets' failure, and no retry can outlast it: a
scheduler out of reach for ``LOST_AFTER`` seconds, or no worker for as long, raises
``ClusterLost``, which stops the run. It is sealed ``interrupted`` (the trials whose
calls were in flight have no bundle, so they run again) and ``assay resume RUN
--cluster ADDRESS`` finishes it once a cluster is back.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Container
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import msgspec

from assay.errors import RunError
from assay.run._cluster_code import code_digest
from assay.run._cluster_worker import Call, Chunk, Maker, Reply, call_chunk, call_key, collect
from assay.run._groups import first_error

CHUNK = 64
LOST_AFTER = 10.0  # seconds without the scheduler, or without a worker, mid-run
WATCH_EVERY = 0.5  # seconds between two looks at the client's state
STRAGGLER_GRACE = 10.0  # seconds past a call's timeout before its lost worker is given up
_T = TypeVar("_T")


class ClusterLost(RunError):
    """The scheduler, or every worker, has been gone for ``LOST_AFTER`` seconds (or a
    worker that joined runs other code: *key* ``run.cluster_other_code``): the run stops,
    sealed ``interrupted``; the pipeline adds the run's folder to the message."""

    def __init__(
        self, address: str, reason: str, key: str = "run.cluster_lost", **more: object
    ) -> None:
        super().__init__(key, address=address, reason=reason, path="RUN", **more)

    def again(self) -> ClusterLost:
        """The same error for another call of the lost chunk (one object raised once)."""
        params = dict(self.params)
        address, reason = str(params.pop("address")), str(params.pop("reason"))
        params.pop("path", None)
        return ClusterLost(address, reason, self.key, **params)


def call_chunks(
    client: Any, payload: bytes, settings: str, address: str, timeout: float, make: Maker
) -> Chunks:
    """A sender of calls, in chunks, to the caller ``make(payload, settings)`` that each
    worker builds once (a Python task rebuilt from its frozen spec, say); *timeout* is
    how long a call may run (see ``STRAGGLER_GRACE``). The calls of a moment are spread
    over the workers: each worker's caller has its own connections to a model."""
    return Chunks(client, payload, settings, address, timeout, make, spread=True)


class _Waiting:
    """One call waiting for its chunk's reply."""

    __slots__ = ("call", "done", "lost", "reply", "taken", "worker")

    def __init__(self, call: Call) -> None:
        self.call = call
        self.taken = False  # in a chunk already (it stays in the queue until popped)
        self.reply: Reply | None = None
        self.worker: str | None = None  # where it still runs, when its chunk came back without it
        self.lost: ClusterLost | None = None  # the cluster went while its chunk was out
        self.done = anyio.Event()


class Chunks:
    """Gathers the calls of a moment into chunks, with no task of its own: each caller
    yields once, and one still waiting then takes itself and up to ``CHUNK - 1`` others
    and sends them, so every call is sent by a chunk that holds it.

    With *spread*, the calls waiting are shared among the workers that have no chunk
    of ours (16 calls, 2 such workers: two chunks of 8), so Dask can give each one a
    chunk: a Python task's trials hold a worker's model connections
    (``--max-connections`` a worker), and one chunk of them all would leave the other
    workers idle. A chunk comes back whole, so its calls go out again as one chunk
    while the others are out: the chunks do not split further at each round trip,
    which cost the driver 0.2 ms more a trial. Without *spread* (a YAML spec's quick
    calls) the fewest chunks win: each costs the scheduler a task."""

    def __init__(
        self,
        client: Any,
        target: bytes,
        root: str,
        address: str,
        timeout: float,
        make: Maker | None = None,
        spread: bool = False,
    ) -> None:
        self._spread = spread
        self._waiting = 0  # calls in the queue not yet in a chunk
        self._out = 0  # chunks sent and not yet back
        self._out_on: Counter[str] = Counter()  # with spread: of those, each worker's
        self._sent_to: Counter[str] = Counter()  # with spread: chunks given each worker
        self._make = make  # what answers the calls on a worker (None: a YAML spec's target)
        self._client = client
        self._timeout = timeout
        self._target = target
        self._root = root
        self._address = address
        self._queue: deque[_Waiting] = deque()
        self._members: set[str] | None = None  # the workers' addresses, once asked
        self._members_at = float("-inf")
        self._id = uuid.uuid4().hex  # names this run's calls left running on a worker
        self._code = code_digest()  # every chunk's worker must run the same (_other_code)

    async def send(self, call: Call) -> Reply:
        mine = _Waiting(msgspec.structs.replace(call, run=self._id))
        self._queue.append(mine)
        self._waiting += 1
        await anyio.lowlevel.checkpoint()  # the other trials of this moment join
        if not mine.taken:
            mine.taken = True
            chunk = [mine]
            size = self._chunk_size()
            while self._queue and len(chunk) < size:
                other = self._queue.popleft()
                if not other.taken:
                    other.taken = True
                    chunk.append(other)
            self._waiting -= len(chunk)
            await self._run(chunk)
        await mine.done.wait()
        if mine.lost is not None:  # the run stops; an infrastructure failure would block it
            raise mine.lost.again()
        if mine.reply is None:  # a straggler, still running on mine.worker
            mine.reply = await self._collected(mine)
        return mine.reply

    def _chunk_size(self) -> int:
        """``CHUNK``, or with *spread* the share of the calls waiting now of each worker
        that has no chunk of ours (``CHUNK`` when each has one)."""
        free = worker_count(self._client) - self._out if self._spread else 0
        if free <= 0:
            return CHUNK
        return max(1, min(CHUNK, -(-self._waiting // free)))

    async def _run(self, chunk: list[_Waiting]) -> None:
        self._out += 1
        placed = None
        try:
            placed = await self._placed()
            worker, replies = await self._replies([waiting.call for waiting in chunk], placed)
            for waiting, reply in zip(chunk, replies, strict=True):
                waiting.reply = reply
                waiting.worker = worker if reply is None else None
        except ClusterLost as lost:  # the others of the chunk stop the run with it
            for waiting in chunk:
                waiting.lost = lost
            raise
        finally:  # cancelled, or failed: the others of the chunk must not wait forever
            self._out -= 1
            if placed is not None:
                self._out_on[placed] -= 1
            for waiting in chunk:
                if waiting.reply is None and waiting.worker is None and waiting.lost is None:
                    waiting.reply = Reply([], infra=_CANCELLED)
                waiting.done.set()

    async def _collected(self, straggler: _Waiting) -> Reply:
        """The reply of a call its chunk left running on ``straggler.worker``. A worker
        lost since cannot answer: the call is then an infrastructure failure, found as
        soon as the scheduler no longer lists that worker (a trial of a Python task may
        run for minutes), else once the call's own timeout has passed with a margin."""
        key = call_key(straggler.call)
        future = self._client.submit(
            collect, [key], workers=[straggler.worker], allow_other_workers=False, pure=False
        )

        def failed(reason: str) -> dict[str, Reply | None]:
            return {key: Reply([], infra=("cluster", reason, None, None))}

        with anyio.move_on_after(self._timeout + STRAGGLER_GRACE):
            try:
                got: dict[str, Reply | None] = await self._awaited(future, failed, straggler.worker)
            except _WorkerGone:
                got = {}
            reply = got.get(key)
            if reply is not None:
                return reply
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await future.cancel()  # an asynchronous client's cancel is awaited
        return Reply([], infra=("cluster", "the worker running this call was lost", None, None))

    async def _placed(self) -> str | None:
        """With *spread*, the worker with the fewest of our chunks out (of those, the one
        given fewest so far), counted as having one more (None: Dask chooses). Left to
        itself, Dask may give two chunks sent at once to one worker, whose model
        connections then serve both."""
        if not self._spread:
            return None
        members = await self._workers()
        if not isinstance(members, set) or not members:
            return None
        worker: str = min(
            sorted(members), key=lambda address: (self._out_on[address], self._sent_to[address])
        )
        self._out_on[worker] += 1
        self._sent_to[worker] += 1
        return worker

    async def _replies(
        self, calls: list[Call], placed: str | None = None
    ) -> tuple[str | None, list[Reply | None]]:
        def failed(reason: str) -> Chunk:
            return Chunk("", [Reply([], infra=("cluster", reason, None, None))] * len(calls))

        # a loose restriction: another worker takes the chunk if that one is gone
        where = {"workers": [placed], "allow_other_workers": True} if placed else {}
        chunk = await self._awaited(
            self._client.submit(
                call_chunk, self._target, self._root, calls, self._make, pure=False, **where
            ),
            failed,
        )
        if chunk.worker and chunk.code != self._code:
            raise self._other_code(chunk)
        return chunk.worker or None, chunk.replies

    def _other_code(self, chunk: Chunk) -> ClusterLost:
        """The run's end when *chunk* came from a worker running other assay code than
        this driver: one that joined after the run's start was checked (``check_same_code``
        checks those there then). Its replies are not taken: evidence made by other code
        is not this run's."""
        return ClusterLost(
            self._address,
            f"worker {chunk.worker} runs other assay code",
            "run.cluster_other_code",
            worker=chunk.worker,
            theirs=chunk.code or "unknown",
            mine=self._code,
        )

    async def _awaited(
        self, future: Any, failed: Callable[[str], _T], worker: str | None = None
    ) -> _T:
        """A task's result, or ``failed(reason)`` when the cluster could not run it (its
        workers kept dying); ClusterLost when the cluster itself is gone; _WorkerGone
        when the task is pinned to *worker* and the scheduler no longer lists it."""
        from concurrent.futures import CancelledError

        from distributed import KilledWorker
        from distributed.client import ClosedClientError

        try:
            result: _T = await self._watched(future, worker)
        except KilledWorker as exc:
            return failed(reason_of(exc))
        except (CancelledError, ClosedClientError, OSError, TimeoutError) as exc:
            if self._client.status == "running":
                return failed(reason_of(exc))
            why = f"the scheduler went away ({type(exc).__name__})"
            raise ClusterLost(self._address, why) from exc
        return result

    async def _watched(self, future: Any, worker: str | None = None) -> Any:
        """A task's result, awaited while ``_watch`` looks after the cluster."""
        result: Any = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch, worker)
                result = await future
                group.cancel_scope.cancel()
        except BaseExceptionGroup as errors:  # the one that matters, not a group of them
            raise first_error(errors) from None
        return result

    async def _workers(self) -> Container[str]:
        """The addresses of the cluster's workers, asked of the scheduler at most once
        every ``WATCH_EVERY`` seconds for all the stragglers (an asynchronous client's
        cached ``scheduler_info`` names none); everyone, until first known."""
        now = time.monotonic()
        if self._members is None or now - self._members_at >= WATCH_EVERY:
            self._members_at = now
            with contextlib.suppress(OSError):  # out of reach: _watch says so
                identity = await self._client.scheduler.identity(n_workers=-1)
                self._members = set(identity.get("workers") or ())
        return self._members if self._members is not None else _Everyone()

    async def _watch(self, worker: str | None = None) -> None:
        """Raise ClusterLost once the scheduler has been out of reach, or the cluster
        without a worker, for ``LOST_AFTER`` seconds (a chunk would wait forever);
        _WorkerGone once other workers are listed but not *worker*."""
        unreachable = no_worker = None
        while True:
            await anyio.sleep(WATCH_EVERY)
            now = time.monotonic()
            if self._client.status != "running":
                unreachable = unreachable or now
                no_worker = None
            else:
                unreachable = None
                count = worker_count(self._client)
                no_worker = (no_worker or now) if not count else None
                if worker is not None and count and worker not in await self._workers():
                    raise _WorkerGone(worker)
            if unreachable is not None and now - unreachable >= LOST_AFTER:
                why = f"the scheduler has been out of reach for {LOST_AFTER:g} s"
                raise ClusterLost(self._address, why)
            if no_worker is not None and now - no_worker >= LOST_AFTER:
                why = f"no worker has been connected for {LOST_AFTER:g} s"
                raise ClusterLost(self._address, why)


class _WorkerGone(Exception):
    """The worker a straggler was left running on is no longer in the cluster."""


class _Everyone:
    """Every worker address: the cluster's, before the scheduler has named them."""

    def __contains__(self, address: object) -> bool:
        return True


def worker_count(client: Any) -> int:
    """The workers *client*'s scheduler has, as the client last heard. Its ``n_workers``:
    the refresh Dask makes every few seconds leaves ``workers`` itself empty, which read
    as "no worker" once a call had been waited on for ``LOST_AFTER`` seconds."""
    info = client.scheduler_info()
    count = info.get("n_workers")
    return int(count) if count is not None else len(info.get("workers") or {})


_CANCELLED = ("cluster", "the chunk that carried this call was cancelled", None, None)


def reason_of(exc: BaseException) -> str:
    """One line: Dask's messages span several."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
