"""Target calls on a Dask cluster: the trials stay in the driver, the calls go out.

The driver keeps each trial's life (its attempts, retries and evidence) and stays the
single writer of the run; a worker only puts samples to the target, rebuilt there from
its spec. What a call records on the worker comes back with its answer and is replayed
into the trial's recorder, so a run on a cluster leaves the evidence a local run would.

How the calls travel, in chunks, and how the cluster is watched while they do, is
``_cluster_chunks``'s job; this module connects to the cluster and makes the targets.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec

from assay.dataset import Sample
from assay.errors import ConfigError, RunError
from assay.evidence import current_recorder, replay_detached
from assay.run._cluster_chunks import Chunks, reason_of, worker_count
from assay.run._cluster_code import check_same_code
from assay.run._cluster_worker import Call, TargetCaller, prepare
from assay.spec import TargetSpec
from assay.target import InfrastructureError, Target, TargetOutcome

PYTHON_TASK_ON_CLUSTER = (
    "cluster_targets runs a YAML spec's targets (programs, functions, endpoints); "
    "a Python task's trials go to the workers whole (assay.pipeline's task_on_cluster)"
)
CONNECT_TIMEOUT = 10.0  # seconds to reach the scheduler, and to see a worker there
MESSAGE_LOG = 32  # messages to the scheduler Dask's client keeps (see _short_message_log)


@asynccontextmanager
async def cluster_targets(
    address: str, specs: Sequence[TargetSpec], root: Path
) -> AsyncIterator[dict[str, Target]]:
    """Targets that run the calls of *specs* (a YAML spec's, from the folder *root*) on
    the Dask scheduler at *address*; the connection is closed when the block ends."""
    for spec in specs:
        if spec.kind == "solver":
            raise ConfigError("task.option", option="--cluster", reason=PYTHON_TASK_ON_CLUSTER)
    async with cluster_client(address) as client:
        for spec in specs:
            await _check_built(client, spec, root)
        yield {spec.id: ClusterTarget(spec, root, client, address) for spec in specs}


async def _check_built(client: Any, spec: TargetSpec, root: Path) -> None:
    """Build the target on every worker now (kept for its calls), and refuse the run
    (exit 2, nothing written) when one cannot: a module or script it does not see, at
    the same path. Found at the first call instead, it stopped a run already started."""
    built = await client.run(prepare, msgspec.json.encode(spec), str(root.resolve()), TargetCaller)
    error = unbuilt(built, f"target {spec.id!r}", f"the spec's folder {root.resolve()}")
    if error is not None:
        raise error


def unbuilt(built: dict[str, str | None], what: str, where: str) -> ConfigError | None:
    """The refusal of a run some worker could not build *what* for (``prepare``'s
    answers, by worker), naming the first of them; None when every one could."""
    failed = sorted((worker, why) for worker, why in built.items() if why is not None)
    if not failed:
        return None
    worker, why = failed[0]
    return ConfigError(
        "cluster.unbuilt",
        failed=len(failed),
        workers=len(built),
        what=what,
        worker=worker,
        why=why,
        where=where,
    )


@asynccontextmanager
async def cluster_client(address: str) -> AsyncIterator[Any]:
    """A ``distributed.Client`` connected to *address*, with a worker there, and Dask's
    loggers quiet while it lives; closed when the block ends."""
    with _dask_logs_quiet():
        client = await _connect(address)
        try:
            yield client
        finally:
            with anyio.CancelScope(shield=True):
                await client.close()


@contextmanager
def _dask_logs_quiet() -> Iterator[None]:
    """Silence Dask's own loggers while the client lives: a lost scheduler makes them
    print tracebacks, and assay says what happened in one line of its own."""
    import distributed  # its loggers exist, with their configured levels, once imported

    del distributed
    loggers = [logging.getLogger("distributed")]
    loggers += [
        logging.getLogger(name)
        for name in list(logging.root.manager.loggerDict)
        if name.startswith("distributed.")
    ]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    _drop_orphaned_gathers()
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


class _OrphanedGathers(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for a Dask client's internal
    gather waiter ending in ``AllExit`` (the client gave up on a lost cluster): nobody
    awaits it, so asyncio logs its traceback when it is collected — at any time, even
    after the client is closed — and assay has already said what happened in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (
            type(error).__name__ == "AllExit" and type(error).__module__.startswith("distributed")
        )


def _drop_orphaned_gathers() -> None:
    """Install ``_OrphanedGathers`` on asyncio's logger, once per process."""
    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, _OrphanedGathers) for f in asyncio_log.filters):
        asyncio_log.addFilter(_OrphanedGathers())


async def _connect(address: str) -> Any:
    """A ``distributed.Client`` (untyped upstream), connected, with a worker to use."""
    from distributed import Client
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme != "inproc":
            parse_host_port(location)
    except ValueError:  # checked first: a Client built on it would warn as it is dropped
        reason = f"{address!r} is not a scheduler's address (tcp://host:port)"
        raise ConfigError("task.option", option="--cluster", reason=reason) from None
    try:
        with _short_message_log():
            client = await Client(  # type: ignore[no-untyped-call]
                address, asynchronous=True, timeout=CONNECT_TIMEOUT
            )
    except (OSError, TimeoutError, ValueError) as exc:
        raise RunError("run.cluster", address=address, reason=reason_of(exc)) from exc
    try:
        await client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        await client.close()
        reason = f"no worker joined within {CONNECT_TIMEOUT:g} s"
        raise RunError("run.cluster", address=address, reason=reason) from exc
    try:
        await check_same_code(client)
    except BaseException:
        await client.close()
        raise
    return client


def _short_message_log() -> contextlib.AbstractContextManager[object]:
    """Dask's client keeps its last messages to the scheduler for debugging, 1,000 by
    default: with a chunk of calls in each, 3 to 5 MB of the driver's memory. It keeps
    ``MESSAGE_LOG`` instead."""
    import dask

    return dask.config.set({"distributed.admin.low-level-log-length": MESSAGE_LOG})


class ClusterTarget:
    """A target whose calls run on the cluster's workers, in chunks."""

    def __init__(self, spec: TargetSpec, root: Path, client: Any, address: str) -> None:
        self.id = spec.id
        target = msgspec.json.encode(spec)
        self._client = client
        self._chunks = Chunks(client, target, str(root.resolve()), address, spec.timeout)

    async def call(self, sample: Sample, epoch: int = 1) -> TargetOutcome:
        """Send the call, replay what it recorded, and answer as the target did."""
        recorder = current_recorder()
        if recorder is None:
            call = Call("", sample, epoch, 0, None)
        else:
            call = Call(recorder.trial_id, sample, epoch, recorder.last, recorder.parent)
        reply = await self._chunks.send(call)
        if recorder is not None:
            replay_detached(reply.ops, recorder)
        if reply.infra is not None:
            raise InfrastructureError(*reply.infra)
        if reply.stop is not None:  # the worker's target stopped the run: said here
            raise stopped_by(reply.stop)
        assert reply.outcome is not None  # a reply has one of the three
        return reply.outcome

    def workers(self) -> int:
        """How many workers the scheduler has now (the progress line shows it): read off
        the client's copy of the scheduler's state, refreshed by Dask every few seconds."""
        return worker_count(self._client)


def stopped_by(stop: tuple[str, dict[str, Any]]) -> RunError | InfrastructureError:
    """The ``RunError`` a worker's target raised (``Reply.stop``: its key and parameters),
    to stop the run here with its one line; a key this assay cannot say (sent by code
    that made the error by hand) is the call's infrastructure failure instead, never a
    traceback."""
    key, params = stop
    try:
        return RunError(key, **params)
    except (KeyError, IndexError, ValueError, TypeError):
        shown = " ".join(repr(key).split())[:100]
        detail = f"the worker stopped the run with an error this assay cannot say: {shown}"
        return InfrastructureError("cluster", detail)
