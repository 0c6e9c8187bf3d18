"""A Python task × model, frozen into the same spec the YAML path produces.

Solvers, scorers and metrics are recorded by registered name and arguments; the dataset
is frozen into raw lines (streamed to a scratch file) and pinned by digest; the task
itself is recorded by file, name and arguments, so ``assay score`` can rebuild its
scorers from the run directory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import partial
from operator import attrgetter, is_not
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assay._registry import json_safe, registry_info
from assay.approval import ApprovalPolicy
from assay.approval._apply import (
    approval_scope,
    check_policies,
    policies_record,
    rebuild_policies,
)
from assay.dataset import Sample, freeze, select
from assay.errors import ConfigError
from assay.model import GenerateConfig, Model, get_model, get_price
from assay.model._registry import ModelRoles, role_names
from assay.pipeline._prepared import Prepared
from assay.pipeline._solver_option import named_solver
from assay.pipeline._task_metrics import KeyedMetrics, TaskMetricsBuilder
from assay.score import (
    AnyScorer,
    Metric,
    Observation,
    ObservationScorer,
    Verdict,
    accuracy,
    from_python_scorer,
    metric_label,
    scorer_metrics,
)
from assay.spec import DatasetRef, EvalSpec, GatePolicy, RetryPolicy, ScorerSpec, TargetSpec
from assay.task import Epochs, Task, load_tasks, task_with
from assay.task._load import frozen_defaults

if TYPE_CHECKING:
    from assay.sandbox._spec import SandboxSpec


class TaskSettings(msgspec.Struct, frozen=True):
    """The run-level settings that decide a Python task's results (and so enter its spec)."""

    score_on_error: bool = False
    retry_on_error: int = 0
    fail_on_error: bool | float | None = None
    continue_on_fail: bool = False
    gate_minimum: float | None = None
    max_attempts: int = 3


def component_name(obj: object, fallback: str) -> str:
    """The registered name of a component, or *fallback*."""
    info = registry_info(obj)
    return info.name if info is not None else getattr(obj, "__name__", fallback)


def dataset_display(dataset: object) -> str:
    """What the spec records as the dataset: its source (hf_dataset's path, split,
    config and revision: pinned in the digest with the samples), else its name."""
    return str(getattr(dataset, "source", None) or getattr(dataset, "name", "memory"))


def _check_provider(model: Model, config: GenerateConfig, samples: Sequence[Sample]) -> None:
    """A ConfigError (exit 2) before any trial when the provider refuses a setting it
    has no field for, or reads text only and a sample's input holds an image."""
    check = getattr(model.api, "check_config", None)
    if check is not None:
        check(config)
    if getattr(model.api, "text_only", False):
        for sample in samples:
            if not isinstance(sample.input, str) and any(m.images for m in sample.input):
                raise ConfigError("model.text_only", model=model.name, sample=str(sample.id))


def prepare_task(
    task: Task,
    model: Model,
    samples: Sequence[Sample],
    settings: TaskSettings,
    task_ref: dict[str, Any] | None = None,
    *,
    epochs: Epochs | None = None,
    config: GenerateConfig | None = None,
    model_roles: dict[str, Any] | None = None,
    model_args: dict[str, Any] | None = None,
    approval: Any = None,
) -> Prepared:
    """Freeze *task* against *model* over *samples* into a runnable Prepared.

    *epochs* overrides the task's own, and *config*'s fields the task's config (the
    eval's ``temperature=``, ``--max-tokens``...); *model_roles* (the eval's, made with
    *model_args*) win over the task's own roles, and *approval* policies over the
    task's. The Task object is not changed.
    """
    roles = {**task.model_roles, **(model_roles or {})}
    policies = check_policies(approval) if approval is not None else task.approval
    task_config = task.config.merge(config)
    _check_provider(model, model.config.merge(task_config), samples)
    from assay.sandbox._spec import specs_record

    epochs = epochs or task.epochs
    sandboxes, sampled = _sandboxes(task, samples)
    dataset = freeze(samples, dataset_display(task.dataset))
    scorers, scorer_specs, metrics = task_scorers(task, settings.score_on_error, policies)
    target = TargetSpec(
        id=model.name,
        kind="solver",
        model=model.name,
        solver=[json_safe(step) for step in task.plan.solvers],
        config=_result_config(model.config.merge(task_config)),
        limits=_result_limits(task, model),
        sandboxes=specs_record(sandboxes),
        model_roles=role_names(roles) or None,
        approval=policies_record(policies) or None,
    )
    spec = EvalSpec(
        evaluation=_safe_id(task.name),
        description=str(task.metadata.get("description", "")),
        dataset=DatasetRef(path=dataset.display, digest=dataset.digest, samples=len(dataset)),
        targets=(target,),
        scorers=tuple(scorer_specs),
        repetitions=epochs.epochs,
        epochs_reducer=tuple(epochs.reducers),
        gate=GatePolicy(minimum=settings.gate_minimum),
        retry=RetryPolicy(max_attempts=settings.max_attempts),
        task=task_ref,
        errors=msgspec.to_builtins(settings),
        task_info=json_safe(task.info) or None,
    )

    def metadata_of(position: int) -> dict[str, Any]:
        return dict(dataset.sample(position).metadata)  # read back, not kept per sample

    def task_metrics() -> TaskMetricsBuilder:
        return TaskMetricsBuilder(
            epochs.epochs, epochs.reducers, metrics, len(dataset), metadata_of
        )

    from assay.target import SolverTarget  # loaded only for Python tasks

    files_base = _files_base(task, task_ref)
    solver_target = SolverTarget(
        model.name,
        model,
        task.plan,
        task.limits,
        task_config,
        sandboxes=sandboxes,
        files_base=files_base,
        scorers=task.scorer,
        approval=policies,
        cleanup=task.cleanup,
    )
    return Prepared(
        spec=spec,
        dataset=dataset,
        targets={model.name: solver_target},
        sandboxes=bool(sandboxes) or sampled,
        scorers=scorers,
        source=Path(task_ref["file"]) if task_ref and task_ref.get("file") else None,
        task_metrics=task_metrics,
        model_roles=ModelRoles(roles, model_args or {}, active=model),
    )


def _sandboxes(task: Task, samples: Sequence[Sample]) -> tuple[tuple[SandboxSpec, ...], bool]:
    """The task's sandbox specs, and whether any sample names its own; each is checked
    (provider known, options taken) before anything runs."""
    from assay.sandbox._spec import sandbox_specs

    task_specs = sandbox_specs(task.sandbox, f"Task {task.name!r} sandbox")
    checked = {spec.provider: spec for spec in task_specs}
    sampled = False
    # whether any sample names a sandbox, asked in C (most name none): a Python step a
    # sample only when one does
    named = next(filter(partial(is_not, None), map(attrgetter("sandbox"), samples)), None)
    for sample in samples if named is not None else ():
        if sample.sandbox is not None:
            sampled = True
            for spec in sandbox_specs(sample.sandbox, f"sample {sample.id} sandbox"):
                checked.setdefault(spec.provider, spec)
    for spec in checked.values():
        spec.make().check()
    return task_specs, sampled


def _files_base(task: Task, task_ref: dict[str, Any] | None) -> Path:
    """Where a sample's file paths are read from: the dataset file's folder, else the
    task file's, else the working folder."""
    location = getattr(task.dataset, "location", None)
    if location:
        return Path(location)
    if task_ref and task_ref.get("file"):
        return Path(task_ref["file"]).resolve().parent
    return Path.cwd()


def task_scorers(
    task: Task, score_on_error: bool, approval: Sequence[ApprovalPolicy] | None = None
) -> tuple[dict[str, AnyScorer], list[ScorerSpec], dict[str, dict[str, Metric] | KeyedMetrics]]:
    """The task's scorers adapted to the pipeline, their spec entries and their metrics
    (by score key for ``metrics={...}``). The tool calls a scorer makes go through
    *approval* (the task's own policies when not given), as the solver's do."""
    policies = task.approval if approval is None else tuple(approval)
    scorers: dict[str, AnyScorer] = {}
    specs: list[ScorerSpec] = []
    metrics: dict[str, dict[str, Metric] | KeyedMetrics] = {}
    for index, product in enumerate(task.scorer):
        name = component_name(product, f"scorer{index}")
        scorer_id = name if name not in scorers else f"{name}_{index}"
        declared = task.metrics if task.metrics is not None else scorer_metrics(product)
        chosen = declared or [accuracy()]
        scorers[scorer_id] = _under_approval(from_python_scorer(product, score_on_error), policies)
        metrics[scorer_id] = (
            _labelled_by_key(chosen) if isinstance(chosen, dict) else _labelled(chosen)
        )
        specs.append(
            ScorerSpec(
                id=scorer_id,
                kind="python",
                component=json_safe(product),
                metrics=[json_safe(chosen)] if isinstance(chosen, dict) else json_safe(chosen),
            )
        )
    return scorers, specs, metrics


def _under_approval(
    scorer: ObservationScorer, policies: tuple[ApprovalPolicy, ...]
) -> ObservationScorer:
    """*scorer*, judging inside the approval policies' scope (itself when there are none)."""
    return _UnderApproval(scorer, policies) if policies else scorer


class _UnderApproval:
    """A scorer whose tool calls the approval policies decide (``assay.approval``): in
    Inspect a scorer runs in its sample's approval scope, so its calls are approved as
    the solver's are; ``aclose`` reaches the scorer's own."""

    __slots__ = ("policies", "scorer")

    def __init__(self, scorer: ObservationScorer, policies: tuple[ApprovalPolicy, ...]) -> None:
        self.scorer, self.policies = scorer, policies

    async def __call__(self, observation: Observation) -> Verdict:
        with approval_scope(self.policies):
            return await self.scorer(observation)

    async def aclose(self) -> None:
        """Let the scorer release what it holds (its optional ``aclose``)."""
        closer = getattr(self.scorer, "aclose", None)
        if closer is not None:
            await closer()


def _labelled_by_key(chosen: dict[str, list[Any]]) -> KeyedMetrics:
    """``metrics={"key": [...], "*": [...]}``: each key's metrics, labelled."""
    return KeyedMetrics({key: _labelled(list(listed)) for key, listed in chosen.items()})


def _labelled(chosen: list[Any]) -> dict[str, Metric]:
    """The metrics by the names they are reported under; a repeated name gets ``_<n>``."""
    named: dict[str, Metric] = {}
    for index, product in enumerate(chosen):
        label = metric_label(product, f"metric{index}")
        named[label if label not in named else f"{label}_{index}"] = product
    return named


def _result_config(config: GenerateConfig) -> dict[str, Any]:
    """The generation settings that decide results (connection limits and backoff do not)."""
    settings: dict[str, Any] = msgspec.to_builtins(config)
    settings.pop("max_connections", None)
    settings.pop("retry_backoff", None)
    return settings


def _result_limits(task: Task, model: Model) -> dict[str, Any]:
    """The limits, and with a ``cost_limit`` the model's price: it decides where a trial
    is cut off, so it is frozen with the rest (a resume at another price is refused)."""
    limits: dict[str, Any] = msgspec.to_builtins(task.limits)
    if task.limits.cost_limit is not None:
        price = get_price(model.name)
        if price is None:
            raise ConfigError("prices.missing", model=model.name)
        limits["price"] = msgspec.to_builtins(price)
    return limits


def rebuild_frozen(spec: EvalSpec, connections: int | None = None) -> Prepared:
    """The Prepared of a Python-task run rebuilt from its frozen spec, by re-importing
    its task file: refused for a task made in memory (a notebook's, an ``eval(Task)``),
    which has no file to re-import, or with ``-T`` arguments that are not data (a
    function is frozen as its repr). ``resume`` and a run on a cluster both rebuild so."""
    if spec.task is None:
        raise ConfigError("task.in_memory", evaluation=spec.evaluation)
    args = spec.task.get("args") or {}
    not_data = sorted(name for name, value in args.items() if _not_data(json_safe(value)))
    if not_data:  # a default is made again by itself (``_passed_args``)
        defaults = frozen_defaults(spec.task["file"], spec.task["name"], args)
        not_data = [name for name in not_data if name not in defaults]
    if not_data:  # frozen as a name or a repr: made again, the task would get a dict
        raise ConfigError("task.args", task=spec.task["name"], names=", ".join(not_data))
    return rebuild_task(spec, connections)


def _passed_args(record: dict[str, Any]) -> dict[str, Any]:
    """The recorded task arguments to pass when the task is made again: all but those
    that are not data and are the task's own defaults (it gets those by itself)."""
    args: dict[str, Any] = record["args"]
    not_data = {name for name, value in args.items() if _not_data(json_safe(value))}
    if not not_data:
        return args
    defaults = frozen_defaults(record["file"], record["name"], args) & not_data
    return {name: value for name, value in args.items() if name not in defaults}


def _not_data(frozen: Any) -> bool:
    """Whether *frozen* (``json_safe``'s) stands for a function or an object, which a
    task made again from its file would get as that dict."""
    text = repr(frozen)
    return "'$repr'" in text or "'$callable'" in text


def rebuild_task(spec: EvalSpec, connections: int | None = None) -> Prepared:
    """The Prepared of a Python-task run, rebuilt from its frozen spec (for resume); its
    model with *connections* calls in flight at most (not frozen: it decides no result),
    else its default."""
    record: dict[str, Any] = spec.task or {}
    (task, loaded), *_ = load_tasks(f"{record['file']}@{record['name']}", _passed_args(record))
    if loaded["digest"] != record["digest"]:
        raise ConfigError("task.changed", path=record["file"])
    model_args = record.get("model_args", {})
    if "$repr" in repr(model_args):
        raise ConfigError("task.model_args", model=spec.targets[0].model)
    if "solver" in record:  # the eval's --solver, made again
        task = task_with(task, solver=named_solver(record["solver"]))
    if "limits" in record:  # the eval's message_limit=... and the like
        task = task_with(task, **record["limits"])
    epochs = msgspec.structs.replace(task.epochs, epochs=spec.repetitions)
    limit = GenerateConfig(max_connections=connections)
    model = get_model(spec.targets[0].model or "mock/default", limit, **model_args)
    if "endpoint" in record and record["endpoint"] != model.endpoint:
        was, now = record["endpoint"], model.endpoint
        raise ConfigError("task.endpoint_changed", model=model.name, was=was, now=now)
    settings = msgspec.convert(spec.errors or {}, TaskSettings)
    samples = select(task.dataset, **record.get("select", {}))
    config = msgspec.convert(record.get("config", {}), GenerateConfig)  # the eval's settings
    roles = spec.targets[0].model_roles or {}
    return prepare_task(
        task,
        model,
        samples,
        settings,
        record,
        epochs=epochs,
        config=config,
        model_roles=roles,
        model_args=model_args,
        approval=rebuild_policies(spec.targets[0].approval, task.approval),
    )


def _safe_id(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.")
    return cleaned[:128] or "task"


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes (a task file is pinned like a script)."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
