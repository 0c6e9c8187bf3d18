"""A Python task on a Dask cluster: each trial's solver and scorers run on a worker.

The driver keeps what it keeps for a YAML spec (the plan, attempts and retries, the
evidence, the gate, the reports) and sends each attempt to a worker, in the chunks
``run._cluster_chunks`` makes. A worker rebuilds the task once from the frozen spec, as
``assay resume`` does (its file re-imported, its dataset selected again, its model made
with the run's ``-M`` arguments), and checks it freezes to the same digest. It then
runs the attempt's solver chain, with its model calls and tools, and, right after it,
the task's scorers on that outcome: one round trip per attempt.

What the worker records comes back as ops (``DetachedRecorder``). The solver's are
replayed into the trial when the reply arrives; each scorer's are kept until the
driver's ``judge`` asks that scorer for its verdict, and replayed then, under the trial
in its scoring phase, so the log holds the events a local run would, in the same order.
A judge that finds no verdict kept for the outcome it judges (a resumed run's finished
trials, judged again from their logged grader calls) scores in the driver.

A task with sandboxes has each attempt's made on its worker, inside that one round
trip, used by the solver's tools and then by the scorers, and removed there before the
reply goes (``ClusterTaskTarget`` says how the driver records the removals).

Each worker makes its own model, so connections and the adaptive limit are per worker
(the driver's ``max_connections`` holds on each), with ``-j`` (trials in flight) the cap
over all of them; a ``local/...`` model starts one server per worker. The workers price
their calls from the driver's price table, as a local run would. The response cache is
used on the workers only if they share its folder (checked before the run); otherwise
``--cache`` is refused.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assay.errors import ConfigError, RunError
from assay.evidence import DetachedRecorder, current_recorder, replay_detached
from assay.model import (
    Model,
    Price,
    ResponseCache,
    cache_scope,
    current_cache,
    epoch_scope,
    price_scope,
)
from assay.model._prices import current_prices
from assay.model._registry import model_roles_scope
from assay.pipeline._judge import observation_of
from assay.pipeline._prepared import Prepared
from assay.pipeline._task_prepare import rebuild_frozen
from assay.score import AnyScorer, Observation, Verdict, score_observation
from assay.spec import EvalSpec
from assay.target import InfrastructureError, TargetOutcome

if TYPE_CHECKING:  # Dask's side is loaded only for --cluster (``_eval`` imports this module)
    from assay.run import Call, Reply
    from assay.sandbox._lifecycle import TrialSandboxes

NO_TIME_LIMIT = 3600.0
"""Seconds a trial without a ``time_limit`` may run before a worker lost under it is
given up (see ``STRAGGLER_GRACE``)."""


class ClusterRefused(ConfigError):
    """A Python task the cluster cannot run, or an address that is not one: it stops
    the eval before the unit runs (exit 2), as for a YAML spec, instead of being one
    unit's error."""

    @classmethod
    def of(cls, error: ConfigError) -> ClusterRefused:
        return cls(error.key, **error.params)


class ClusterUnreachable(RunError):
    """No scheduler at the address, or no worker there: the eval stops (exit 5), as a
    YAML spec's run does, instead of each unit failing alike."""

    @classmethod
    def of(cls, error: RunError) -> ClusterUnreachable:
        return cls(error.key, **error.params)


class _WorkerSettings(msgspec.Struct, frozen=True):
    """What a worker needs beside the spec, none of it frozen there since none of it
    decides a result: the response cache, when the run uses one; the calls its model
    may have in flight (the driver's model's ``max_connections``: ``--max-connections``
    holds on each worker); the driver's price table, so the workers price their calls
    as a local run would (a ``--prices`` file is read by the driver only)."""

    cache: str | None = None
    expiry: float | None = None
    connections: int | None = None
    prices: dict[str, Price] | None = None


@asynccontextmanager
async def task_on_cluster(address: str, prepared: Prepared) -> AsyncIterator[Prepared]:
    """*prepared* (a Python task's) with a target and scorers that run on the workers
    of the Dask scheduler at *address*; refused (``ClusterRefused``) where ``resume``
    would refuse to rebuild the task, or when the workers do not share the cache."""
    from assay.run import call_chunks, cluster_client, worker_count

    try:
        _check_rebuildable(prepared)
    except ConfigError as exc:
        raise ClusterRefused.of(exc) from None
    cache = current_cache()
    settings = _settings(prepared, cache)
    async with contextlib.AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(cluster_client(address))
        except ConfigError as exc:  # not a scheduler's address
            raise ClusterRefused.of(exc) from None
        except RunError as exc:  # no scheduler there, or no worker
            raise ClusterUnreachable.of(exc) from None
        if cache is not None:
            await _check_shared(client, cache.root.resolve())
        frozen, given = prepared.spec.canonical(), msgspec.json.encode(settings).decode()
        await _check_built(client, frozen, given)
        limit = (prepared.spec.targets[0].limits or {}).get("time_limit") or NO_TIME_LIMIT
        chunks = call_chunks(client, frozen, given, address, float(limit), _TaskCaller)
        kept: dict[str, _Kept] = {}
        target_id = prepared.spec.targets[0].id
        scorers: dict[str, AnyScorer] = {
            scorer_id: ClusterScorer(scorer_id, scorer, kept)
            for scorer_id, scorer in prepared.scorers.items()
        }
        target = ClusterTaskTarget(target_id, chunks, kept)
        yield msgspec.structs.replace(
            prepared,
            targets={target_id: target},
            scorers=scorers,
            workers=lambda: worker_count(client),  # the progress line shows them
        )


def _settings(prepared: Prepared, cache: ResponseCache | None) -> _WorkerSettings:
    """The driver's cache folder, connections and prices, for the workers."""
    model = getattr(next(iter(prepared.targets.values())), "model", None)
    connections = model.config.max_connections if isinstance(model, Model) else None
    prices = current_prices()
    return _WorkerSettings(
        str(cache.root.resolve()) if cache is not None else None,
        cache.expiry if cache is not None else None,
        connections,
        dict(prices) if prices is not None else None,
    )


def _check_rebuildable(prepared: Prepared) -> None:
    """Refuse a task the workers cannot rebuild: resume's refusals (built in memory,
    model arguments that are not data), and a rebuilt spec that differs (e.g. a ``-T``
    argument that is not data)."""
    spec = prepared.spec
    rebuilt = rebuild_frozen(spec)
    if rebuilt.spec.digest != spec.digest:
        from assay.pipeline._resume import spec_changes  # resume's, not a plain run's start

        changed = spec_changes(msgspec.to_builtins(spec), rebuilt.spec)
        reason = (
            f"the task rebuilt from its file is not this one ({changed}), so a worker "
            "would run another evaluation; give -T arguments that are plain values"
        )
        raise ConfigError("task.option", option="--cluster", reason=reason)


async def _check_shared(client: Any, folder: Path) -> None:
    """Refuse ``--cache`` unless every worker sees the driver's cache folder: a file
    made there now must be there, at the same path, for each of them."""
    probe = folder / f".cluster-probe-{uuid.uuid4().hex}"
    probe.touch()
    try:
        seen = await client.run(_sees, str(probe))
    finally:
        probe.unlink(missing_ok=True)
    blind = sorted(worker for worker, found in seen.items() if not found)
    if blind:
        reason = (
            f"the workers do not share the cache folder {folder} ({len(blind)} of "
            f"{len(seen)} cannot see it); put it on a shared file system "
            "(ASSAY_CACHE_DIR) or run without --cache"
        )
        raise ClusterRefused("task.option", option="--cache", reason=reason)


async def _check_built(client: Any, frozen: bytes, settings: str) -> None:
    """Refuse the run unless every worker rebuilds the task now (kept for its attempts):
    one that cannot (its file, the modules beside it or a file it reads not there, a
    relative path read from another working folder) would fail every attempt sent to it
    as infrastructure, and block the trials."""
    from assay.run._cluster import unbuilt
    from assay.run._cluster_worker import prepare

    built = await client.run(prepare, frozen, settings, _TaskCaller)
    where = (
        "the task's file, the modules beside it and the files it reads (a path relative "
        "to the working folder is read from the worker's)"
    )
    error = unbuilt(built, "the task", where)
    if error is not None:
        raise ClusterRefused.of(error)


def _sees(path: str) -> bool:
    """On a worker: is *path* there?"""
    return Path(path).exists()


class _Kept:
    """The verdicts a worker gave an outcome, each kept until its scorer is asked."""

    __slots__ = ("failure", "kind", "verdicts")

    def __init__(self, outcome: TargetOutcome, scores: list[tuple[str, Verdict, list[Any]]]):
        self.kind = outcome.kind
        self.failure = outcome.failure
        self.verdicts = {scorer_id: (verdict, ops) for scorer_id, verdict, ops in scores}


class ClusterTaskTarget:
    """The task's target in the driver: each attempt goes to a worker.

    A task with sandboxes has each attempt's made on its worker, kept there for the
    task's scorers, which run right after it, and removed there before the reply
    comes back (``_TaskCaller``), so no sandbox outlives its round trip, whatever
    becomes of the trial. The driver's own ``TrialSandboxes`` of the trial (empty)
    holds the run's ``max_sandboxes`` slot while the attempt is out and records the
    worker's removals where a local run records them: before the next attempt's
    sandboxes, or after the scorers."""

    def __init__(self, target_id: str, chunks: Any, kept: dict[str, _Kept]) -> None:
        self.id = target_id
        self._chunks = chunks
        self._kept = kept

    async def call(self, sample: Any, epoch: int = 1) -> TargetOutcome:
        """Send the attempt, replay what its solver recorded, keep its verdicts."""
        from assay.run import Call
        from assay.sandbox._lifecycle import current_trial_sandboxes

        recorder = current_recorder()
        reply: Reply
        if recorder is None:  # not in a run: nothing to record, nor to score later
            reply = await self._chunks.send(Call("", sample, epoch, 0, None))
        else:
            sandboxes = current_trial_sandboxes()  # a run with sandboxes, or capping them
            if sandboxes is not None:
                reply = await self._sandboxed_call(sample, epoch, recorder, sandboxes)
            else:
                call = Call(
                    recorder.trial_id, sample, epoch, recorder.last, recorder.parent, recorder.root
                )
                reply = await self._chunks.send(call)
                replay_detached(reply.ops, recorder)
            self._kept.pop(recorder.trial_id, None)  # an earlier attempt's, now superseded
            if reply.outcome is not None and reply.scores is not None:
                self._kept[recorder.trial_id] = _Kept(reply.outcome, reply.scores)
        if reply.infra is not None:
            raise InfrastructureError(*reply.infra)
        assert reply.outcome is not None  # a reply has one or the other
        return reply.outcome

    async def _sandboxed_call(
        self, sample: Any, epoch: int, recorder: Any, sandboxes: TrialSandboxes
    ) -> Reply:
        """An attempt of a run with sandboxes (see the class doc), or that caps them
        (a scorer's own, ``python_tests``', are made within the attempt's round trip):
        the earlier attempt's removal recorded first, as a local attempt's ``open``
        does."""
        from assay.run import Call

        await sandboxes.close()
        call = Call(
            recorder.trial_id,
            sample,
            epoch,
            recorder.last,
            recorder.parent,
            recorder.root,
            keep=not sandboxes.cleanup,
        )
        async with sandboxes.slot():
            reply: Reply = await self._chunks.send(call)
        replay_detached(reply.ops, recorder)
        sandboxes.removed_elsewhere(reply.removed or [])
        return reply


class ClusterScorer:
    """One of the task's scorers in the driver: the verdict a worker gave the trial's
    outcome, its events replayed now; scored here when none was kept for it."""

    __slots__ = ("_kept", "id", "local")

    def __init__(self, scorer_id: str, local: AnyScorer, kept: dict[str, _Kept]) -> None:
        self.id = scorer_id
        self.local = local  # the driver's own, for trials judged again from their logs
        self._kept = kept

    async def __call__(self, observation: Observation) -> Verdict:
        recorder = current_recorder()
        kept = self._kept.get(recorder.trial_id) if recorder is not None else None
        if recorder is None or kept is None or self.id not in kept.verdicts:
            return await score_observation(self.local, observation)
        if (kept.kind, kept.failure) != (observation.outcome, observation.failure):
            del self._kept[recorder.trial_id]  # not this outcome's: judged here
            return await score_observation(self.local, observation)
        verdict, ops = kept.verdicts.pop(self.id)
        if not kept.verdicts:
            del self._kept[recorder.trial_id]
        replay_detached(ops, recorder)
        return verdict

    async def aclose(self) -> None:
        """Close the driver's scorer (a grader it made to judge again)."""
        closer = getattr(self.local, "aclose", None)
        if closer is not None:
            await closer()


class _TaskCaller:
    """On a worker: the task rebuilt from the frozen spec, answering attempts."""

    def __init__(self, spec: bytes, settings: str) -> None:
        frozen = msgspec.json.decode(spec, type=EvalSpec)
        given = msgspec.json.decode(settings, type=_WorkerSettings)
        self.cache = None
        if given.cache is not None:
            self.cache = ResponseCache(Path(given.cache), given.expiry).open()
        self.prices = given.prices
        with price_scope(self.prices):  # a cost_limit's price is frozen: checked again
            self.prepared = rebuild_frozen(frozen, given.connections)
        if self.prepared.spec.digest != frozen.digest:
            raise ConfigError("task.changed", path=str((frozen.task or {}).get("file")))
        self.target = self.prepared.targets[frozen.targets[0].id]
        self.hidden = frozen.hidden_fields

    async def reply(self, call: Call) -> Reply:
        """The attempt's solver, then each scorer on its outcome (the trial's verdicts
        if it is the trial's last attempt; the driver drops them otherwise)."""
        from assay.run import call_target

        roles = model_roles_scope(self.prepared.model_roles)
        with roles, cache_scope(self.cache), price_scope(self.prices):
            if self.prepared.sandboxes:
                return await self._sandboxed(call)
            reply = await call_target(self.target, call)
            if reply.outcome is not None:
                reply.scores = await self._scored(call, reply.outcome)
        return reply

    async def _sandboxed(self, call: Call) -> Reply:
        """The attempt and its scorers in the sandboxes it makes here, removed (their
        processes ended, their folders deleted) before the reply goes, or when the call
        fails or is cancelled; the removals' data go back for the driver to record."""
        from assay.pipeline._trial_sandboxes import bound
        from assay.run import call_target
        from assay.sandbox._lifecycle import trial_sandboxes

        async with trial_sandboxes(cleanup=not call.keep) as sandboxes:
            reply = await call_target(self.target, call)
            if reply.outcome is not None:
                with bound(sandboxes):
                    reply.scores = await self._scored(call, reply.outcome)
            removing = DetachedRecorder(call.trial_id, call.last, call.root)
            with removing.bound():
                await sandboxes.close()
        reply.removed = [op[4] for op in removing.ops if op[0] == "event"]
        return reply

    async def _scored(
        self, call: Call, outcome: TargetOutcome
    ) -> list[tuple[str, Verdict, list[Any]]]:
        seen = {
            "expected": call.sample.to_record(self.hidden)["expected"],
            "outcome": outcome.kind,
            "media": outcome.media,
            "failure": outcome.failure,
        }
        observation = observation_of({"observation": seen}, outcome.output)
        scored = []
        with epoch_scope(call.epoch):  # a grader's cache entry per epoch, as in the driver
            for scorer_id, scorer in self.prepared.scorers.items():
                recorder = DetachedRecorder(call.trial_id, call.last, call.root)
                recorder.root = call.root  # the scorers' events hang from the trial's root
                with recorder.bound(), recorder.scoring_phase():
                    verdict = await score_observation(scorer, observation)
                scored.append((scorer_id, verdict, recorder.ops))
        return scored
