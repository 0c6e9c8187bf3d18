"""A run, ready to execute: the frozen spec and the live parts it was frozen from.

The pipeline runs a ``Prepared`` whatever it came from: a YAML spec (targets and
scorers built from the spec's description) or a Python task (solver chain, model and
scorers taken from the Task). Either way the spec is what is written and digested.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from assay.dataset import Dataset
from assay.pipeline._task_metrics import TaskMetricsBuilder
from assay.score import AnyScorer, build_scorer
from assay.spec import EvalSpec, LoadedSpec
from assay.target import Target, build_target


class Prepared(msgspec.Struct):
    """Everything a run needs; ``source`` is the YAML file or task file it came from."""

    spec: EvalSpec
    dataset: Dataset
    targets: dict[str, Target]
    scorers: dict[str, AnyScorer]
    source: Path | None = None
    task_metrics: Any = None
    sandboxes: bool = False  # some trial may open sandboxes (a Python task's)
    model_roles: Any = None  # a Python task's ModelRoles, bound while its trials run
    workers: Callable[[], int] | None = None  # with --cluster: its workers now (progress)

    def new_task_metrics(self) -> TaskMetricsBuilder | None:
        """A fresh per-sample metrics builder for Python tasks (``None`` for YAML specs)."""
        factory = self.task_metrics
        return factory() if callable(factory) else None


async def close_parts(parts: Iterable[object]) -> None:
    """Let each target or scorer release what it holds (its optional ``aclose``): the
    model under test, the graders a scorer built. Called when a run or re-score ends."""
    for part in parts:
        closer = getattr(part, "aclose", None)
        if closer is not None:
            await closer()


@asynccontextmanager
async def targets_on(prepared: Prepared, cluster: str | None) -> AsyncIterator[Prepared]:
    """*prepared* itself, or, given a Dask scheduler's address, with targets that send
    their calls to its workers (a Python task's scorers too: ``_cluster_task``); the
    targets built here are closed, never called."""
    if cluster is None:
        yield prepared
        return
    if any(target.kind == "solver" for target in prepared.spec.targets):  # a Python task
        from assay.pipeline._cluster_task import task_on_cluster

        async with task_on_cluster(cluster, prepared) as running:
            await close_parts(prepared.targets.values())
            yield running
        return
    from assay.run import ClusterTarget, cluster_targets  # Dask's side, only for --cluster

    root = prepared.source.resolve().parent if prepared.source else Path.cwd()
    async with cluster_targets(cluster, prepared.spec.targets, root) as targets:
        await close_parts(prepared.targets.values())
        first = next(iter(targets.values()), None)
        workers = first.workers if isinstance(first, ClusterTarget) else None
        yield msgspec.structs.replace(prepared, targets=targets, workers=workers)


def prepare_spec(loaded: LoadedSpec) -> Prepared:
    """Build the targets and scorers a YAML spec describes."""
    spec = loaded.spec
    attempts = spec.retry.max_attempts
    return Prepared(
        spec=spec,
        dataset=loaded.dataset,
        targets={t.id: build_target(t, loaded.root, attempts) for t in spec.targets},
        scorers={s.id: build_scorer(s) for s in spec.scorers},
        source=loaded.source,
    )
