"""What a Dask worker runs for assay: a chunk of target calls, on one event loop.

Targets hold things bound to an event loop (an HTTP client's connections, a
subprocess target's reaper), so a worker keeps one loop, in a daemon thread, for its
whole life, and builds each target once, from its spec, on that loop. A chunk's calls
run there at once; each records into its own ``DetachedRecorder``, whose ops go back
with the answer for the driver to replay.

No chunk waits for its slowest call. ``call_chunk`` returns once every call is done, or,
once half of them are, after ``STRAGGLER_FACTOR`` times as long as that took at most
(never less than ``MIN_WAIT``): model calls have a long tail, and one 3 s call would
otherwise hold 63 quick answers. The calls still running stay on this worker's loop,
under their keys, and the driver fetches each with ``collect`` as soon as it is done.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
import msgspec
from anyio.abc import TaskGroup
from anyio.from_thread import BlockingPortal

from assay._event_loop import backend_options
from assay.dataset import Sample
from assay.errors import RunError
from assay.evidence import DetachedRecorder
from assay.run._cluster_code import code_digest
from assay.spec import TargetSpec
from assay.target import InfrastructureError, Target, TargetOutcome, build_target


class Call(msgspec.Struct, frozen=True):
    """One target call: the sample, and where the trial's recorder stood when sent."""

    trial_id: str
    sample: Sample
    epoch: int
    last: int
    parent: int | None
    root: int = 1  # the trial's ``trial_started``: a Python task's scorers record under it
    keep: bool = False  # a Python task's: keep the attempt's sandboxes (--no-sandbox-cleanup)
    run: str = ""  # the sender's own id: two runs of one spec have the same trial ids


class Reply(msgspec.Struct):
    """What came of a call: its recorded ops, and an outcome, an infrastructure failure
    (``reason``, ``detail``, ``retry_after``, ``status``) or a ``RunError`` the target
    raised (``stop``: its key and parameters), which stops the run on the driver as it
    would have stopped a local one (a ``protocol: jsonl`` program's crash loop)."""

    ops: list[tuple[Any, ...]]
    outcome: TargetOutcome | None = None
    infra: tuple[str, str, float | None, int | None] | None = None
    scores: Any = None  # a Python task's: each scorer's verdict and ops (``_cluster_task``)
    removed: Any = None  # a Python task's: its sandboxes' ``sandbox_cleanup`` data, in order
    stop: tuple[str, dict[str, Any]] | None = None


class Chunk(msgspec.Struct):
    """What ``call_chunk`` returns: the worker it ran on, and each call's reply, or
    ``None`` for a call still running there (``collect`` fetches it by its key); and the
    worker's ``code_digest``, which the driver checks on every chunk (a worker may join
    after the run's start)."""

    worker: str
    replies: list[Reply | None]
    code: str = ""


STRAGGLER_FACTOR = 3.0
MIN_WAIT = 0.05  # seconds: below this, waiting for the rest costs less than a round trip
STOP_WAIT = 60.0  # seconds a worker that exits waits for its cancelled calls to clean up

_start_lock = threading.Lock()
_portal: BlockingPortal | None = None
_thread: threading.Thread | None = None
_tasks: TaskGroup | None = None  # the loop's own: calls may outlive their chunk
# touched only on the portal's loop:
_targets: dict[tuple[bytes, str], Caller] = {}
_running: dict[str, _Running] = {}  # calls returned to the driver as still running
_served: dict[tuple[bytes, str], str] = {}  # the run each built target served last


class _Running:
    """A call on this worker's loop: its reply once done, and the event saying so."""

    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.reply: Reply | None = None


class Caller(Protocol):
    """What answers a chunk's calls on a worker, built once from what the driver sent."""

    async def reply(self, call: Call) -> Reply: ...


Maker = Callable[[bytes, str], Caller]
"""Builds a ``Caller`` from the bytes and the string ``call_chunk`` was given."""


class TargetCaller:
    """A YAML spec's target (*target*: its spec as JSON; *root*: the spec's folder)."""

    def __init__(self, target: bytes, root: str) -> None:
        self.target = build_target(msgspec.json.decode(target, type=TargetSpec), Path(root))

    async def reply(self, call: Call) -> Reply:
        return await call_target(self.target, call)

    def new_run(self) -> None:
        """The target now serves another run than before (``PersistentTarget.new_run``)."""
        new_run = getattr(self.target, "new_run", None)
        if new_run is not None:
            new_run()


def call_key(call: Call) -> str:
    """A call's name on the worker: its sender, its trial and where the trial's recorder
    stood (two runs of one spec on one cluster must not take each other's replies)."""
    return f"{call.run}/{call.trial_id}@{call.last}"


def call_chunk(target: bytes, root: str, calls: list[Call], make: Maker | None = None) -> Chunk:
    """Put *calls* to the caller ``make(target, root)`` (by default a YAML spec's
    target: its spec as JSON, and its spec's folder) at once; return their replies in
    order, ``None`` for the stragglers (see the module doc). Dask runs this in a worker
    thread."""
    from distributed import get_worker

    address = get_worker().address
    replies = _event_loop().call(_call_all, target, root, calls, make or TargetCaller)
    return Chunk(address, replies, code_digest())


def prepare(target: bytes, root: str, make: Maker) -> str | None:
    """Build the caller ``make(target, root)`` on this worker now, kept for the chunks
    to come, so that a worker that cannot build it (a Python task whose file or data it
    does not see) is found before the run: None, or why not, in one line."""
    return _event_loop().call(_prepare, target, root, make)


async def _prepare(target: bytes, root: str, make: Maker) -> str | None:
    if (target, root) not in _targets:
        try:
            _targets[(target, root)] = make(target, root)
        except Exception as exc:  # the driver refuses the run, saying why
            return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return None


def collect(keys: list[str]) -> dict[str, Reply | None]:
    """The replies of the calls named *keys* left running by ``call_chunk`` on this
    worker: waits for the first of them, then returns every one done (``None``: a key
    this worker does not hold — the chunk ran on a worker since lost)."""
    from distributed import secede

    secede()  # type: ignore[no-untyped-call]  # waiting on a straggler must not hold one of the worker's task threads
    return _event_loop().call(_collect, keys)


async def _call_all(target: bytes, root: str, calls: list[Call], make: Maker) -> list[Reply | None]:
    built = _targets.get((target, root))
    if built is None:
        built = _targets[(target, root)] = make(target, root)
    if _served.get((target, root)) != calls[0].run:  # a chunk's calls are one run's
        _served[(target, root)] = calls[0].run
        new_run = getattr(built, "new_run", None)
        if new_run is not None:  # what it counted for the run before is not this one's
            new_run()
    running = [_Running() for _ in calls]
    half, everyone = anyio.Event(), anyio.Event()
    finished = 0

    async def one(call: Call, mine: _Running) -> None:
        nonlocal finished
        try:
            mine.reply = await built.reply(call)
        except Exception as exc:  # a bug: the call's failure, not the worker loop's end
            mine.reply = Reply([], infra=("cluster", f"{type(exc).__name__}: {exc}", None, None))
        mine.done.set()
        finished += 1
        if finished * 2 >= len(calls):
            half.set()
        if finished == len(calls):
            everyone.set()

    assert _tasks is not None  # made with the loop
    for call, mine in zip(calls, running, strict=True):
        _tasks.start_soon(one, call, mine)  # outlives this chunk if it must
    started = time.monotonic()
    await half.wait()
    with anyio.move_on_after(max(MIN_WAIT, (STRAGGLER_FACTOR - 1) * (time.monotonic() - started))):
        await everyone.wait()
    for call, mine in zip(calls, running, strict=True):
        if mine.reply is None:
            _running[call_key(call)] = mine
    return [mine.reply for mine in running]


async def _collect(keys: list[str]) -> dict[str, Reply | None]:
    held = {key: _running.get(key) for key in keys}
    waiting = [mine for mine in held.values() if mine is not None]
    if waiting and all(mine.reply is None for mine in waiting):
        async with anyio.create_task_group() as group:

            async def first_done(call: _Running) -> None:
                await call.done.wait()
                group.cancel_scope.cancel()

            for call in waiting:
                group.start_soon(first_done, call)
    done: dict[str, Reply | None] = {}
    for key, held_call in held.items():
        if held_call is None:
            done[key] = None
        elif held_call.reply is not None:
            done[key] = held_call.reply
            _running.pop(key, None)
    return done


async def call_target(built: Target, call: Call) -> Reply:
    """Put *call* to *built*, recording into a ``DetachedRecorder``: its ops and the
    outcome, or the infrastructure failure."""
    recorder = DetachedRecorder(call.trial_id, call.last, call.parent)
    with recorder.bound():
        try:
            outcome = await built.call(call.sample, call.epoch)
        except InfrastructureError as exc:
            failure = (exc.reason, exc.detail, exc.retry_after, exc.status)
            return Reply(recorder.ops, infra=failure)
        except RunError as exc:  # the run cannot go on (a program that never answers)
            return Reply(recorder.ops, stop=(exc.key, dict(exc.params)))
    return Reply(recorder.ops, outcome)


def _event_loop() -> BlockingPortal:
    """The worker's loop, started on first use in a daemon thread (a worker that is
    closed does not wait for it)."""
    global _portal, _thread
    with _start_lock:
        if _portal is None:
            started: queue.Queue[BlockingPortal] = queue.Queue()

            async def serve() -> None:
                global _tasks
                async with anyio.create_task_group() as _tasks, BlockingPortal() as portal:
                    started.put(portal)
                    await portal.sleep_until_stopped()

            options = {"backend_options": backend_options()}  # a wrong choice raises here
            thread = threading.Thread(target=anyio.run, args=(serve,), kwargs=options)
            thread.daemon = True
            thread.name = "assay-cluster-loop"
            thread.start()
            _portal, _thread = started.get(), thread
            atexit.register(_stop_calls)
    return _portal


def _stop_calls() -> None:
    """At the worker's exit: cancel the calls still running on its loop and wait (at
    most ``STOP_WAIT``) for them to end, so each removes what it made (a Python task's
    sandboxes: their processes ended, their folders deleted) before the process goes.
    The loop's thread is a daemon: without this it would die with them mid-flight."""
    portal, thread = _portal, _thread
    if portal is None or thread is None:
        return
    with contextlib.suppress(Exception):  # the loop has ended already
        portal.call(_cancel_calls)
    thread.join(STOP_WAIT)


def _cancel_calls() -> None:
    """On the loop: cancel every call, and the loop with them."""
    assert _tasks is not None  # made with the loop
    _tasks.cancel_scope.cancel()
