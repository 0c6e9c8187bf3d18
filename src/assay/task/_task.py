"""``Task``: a dataset, how to solve it, how to score it, and the limits that apply.

A Task stores its configuration and runs nothing. ``@task`` registers a factory and
records the arguments each Task was made with, so a run can be rebuilt from its
directory; ``task_with`` derives a variant. ``setup`` steps always run before the
solver, even when a run replaces the solver. ``sandbox`` gives every sample a sandbox
(``"bwrap"``, ``("local", {...})``; see docs/sandbox.md) that solvers, tools and scorers
reach through ``assay.sandbox.sandbox()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import msgspec

from assay._registry import registered, registry_info
from assay.approval._apply import check_policies
from assay.dataset import Sample
from assay.model import GenerateConfig, Limits
from assay.solver import Chain, Solver, TaskState, chain, generate
from assay.task._epochs import Epochs

F = TypeVar("F", bound=Callable[..., Any])


class Task:
    """One evaluation, written in Python."""

    def __init__(
        self,
        dataset: Any = None,
        setup: Solver | Sequence[Solver] | None = None,
        solver: Solver | Sequence[Solver] | None = None,
        scorer: Any = None,
        metrics: list[Any] | dict[str, list[Any]] | None = None,
        epochs: int | Epochs | None = None,
        model: str | None = None,
        config: GenerateConfig | None = None,
        fail_on_error: bool | float | None = None,
        message_limit: int | None = None,
        token_limit: int | None = None,
        time_limit: float | None = None,
        working_limit: float | None = None,
        cost_limit: float | None = None,
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        sandbox: Any = None,
        version: int | str = 0,
        tags: Sequence[str] | None = None,
        display_name: str | None = None,
        model_roles: dict[str, Any] | None = None,
        approval: Any = None,
        cleanup: Callable[[TaskState], Awaitable[None]] | None = None,
    ) -> None:
        self.dataset = _resolve_dataset(dataset)
        self.setup: Chain | None = chain(setup) if setup is not None else None
        self.solver: Chain = chain(solver) if solver is not None else chain(generate())
        self.scorer: list[Any] = (
            [] if scorer is None else list(scorer) if isinstance(scorer, list) else [scorer]
        )
        self.metrics = metrics
        self.epochs = epochs if isinstance(epochs, Epochs) else Epochs(epochs or 1)
        self.model = model
        self.config = config or GenerateConfig()
        self.fail_on_error = fail_on_error
        self.limits = Limits(message_limit, token_limit, time_limit, working_limit, cost_limit)
        self._name = name
        self.metadata = dict(metadata or {})
        self.sandbox = sandbox  # each sample's sandbox(es), unless the sample names its own
        self.version = version  # as Inspect: recorded in the run's spec (``task_info``)
        self.tags = list(tags or [])
        self.display_name = display_name
        # models by role ("grader": "openai/gpt-4o"), for get_model(role=...); --model-role wins
        self.model_roles: dict[str, Any] = dict(model_roles or {})
        # tool-call approval policies (assay.approval); eval(approval=...) wins
        self.approval = check_policies(approval)
        # run at the end of each sample, after its solvers (as Inspect's, but before
        # its scorers), with its sandboxes still open; an error in it is the sample's
        self.cleanup = cleanup

    @property
    def info(self) -> dict[str, Any]:
        """What the run records of the task itself: its version, tags, display name and
        metadata, those that are set."""
        info: dict[str, Any] = {"version": self.version} if self.version != 0 else {}
        for key, value in (
            ("tags", self.tags),
            ("display_name", self.display_name),
            ("metadata", self.metadata),
        ):
            if value:
                info[key] = value
        return info

    @property
    def name(self) -> str:
        """The task's name: given, or its registered factory's, or ``task``."""
        if self._name:
            return self._name
        info = registry_info(self)
        return info.name if info is not None else "task"

    @property
    def plan(self) -> Chain:
        """Setup steps, then the solver: what runs on every trial."""
        if self.setup is None:
            return self.solver
        return chain(*self.setup.solvers, *self.solver.solvers)


def _resolve_dataset(dataset: Any) -> Any:
    from assay.dataset import MemoryDataset

    if dataset is None:
        return MemoryDataset([Sample(input="", target="")])
    if isinstance(dataset, list):
        return MemoryDataset(dataset)
    return dataset


def task(factory: F | None = None, *, name: str | None = None) -> Any:
    """Register a task factory: ``@task`` or ``@task(name="...")``."""
    if factory is None:
        return registered("task", name)
    return registered("task", name)(factory)


_FIELDS = {
    "message_limit",
    "token_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
}


def task_with(task: Task, **changes: Any) -> Task:
    """Change fields of *task* in place and return it (e.g. another solver or epochs)."""
    limits = {k: changes.pop(k) for k in list(changes) if k in _FIELDS}
    if limits:
        task.limits = msgspec.structs.replace(task.limits, **limits)
    for key, value in changes.items():
        if key == "solver":
            task.solver = chain(value)
        elif key == "setup":
            task.setup = chain(value) if value is not None else None
        elif key == "epochs":
            task.epochs = value if isinstance(value, Epochs) else Epochs(value)
        elif key == "name":
            task._name = value
        elif key == "scorer":
            task.scorer = list(value) if isinstance(value, list) else [value]
        elif key == "dataset":
            task.dataset = _resolve_dataset(value)
        elif hasattr(task, key):
            setattr(task, key, value)
        else:
            raise TypeError(f"task_with: Task has no field {key!r}")
    return task
