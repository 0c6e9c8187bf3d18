"""The options of ``run`` and ``resume``, each declared once, here.

``run`` takes them all: the execution options it shares with ``resume`` (concurrency,
sink, baseline, JUnit, progress, cluster), the cache, prices and signing options, the
generation options (``_generate``), and the options only a Python task can use
(``python_task_options``: models, task and solver arguments, sample selection,
approval). The commands themselves (``_run``) parse nothing: they call the library.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from assay.cli._ci import junit_option
from assay.cli._generate import GENERATE_NAMES
from assay.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def _declare(func: F, options: list[Callable[[F], F]]) -> F:
    """*func* with *options*, in the order listed (``--help`` shows them so)."""
    for option in reversed(options):
        func = option(func)
    return func


baseline_option = click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Baseline run for the spec's no_regression gate (overrides the spec's baseline).",
)


EXECUTION_NAMES = (
    "max_concurrency",
    "sink_url",
    "sink_max_failure_rate",
    "baseline",
    "junit",
    "progress",
    "cluster",
)
"""The parameter names of ``execution_options``."""


def execution_options(func: F) -> F:
    """The options ``run`` and ``resume`` share, declared once."""
    return _declare(
        func,
        [
            click.option(
                "--max-concurrency",
                "--max-samples",
                "-j",
                type=click.IntRange(1, 10_000),
                default=16,
                show_default=True,
                help="Trials in flight at once (--max-samples, as Inspect names it).",
            ),
            click.option("--sink", "sink_url", help="Also post event batches to this HTTP URL."),
            click.option(
                "--sink-max-failure-rate",
                type=click.FloatRange(0, 1),
                default=0.5,
                show_default=True,
                help="Stop the run once more than this share of sink batches has failed.",
            ),
            baseline_option,
            junit_option,
            click.option(
                "--progress/--no-progress",
                default=None,
                help="Show how many trials are done on stderr [default: on a terminal only].",
            ),
            click.option(
                "--cluster",
                metavar="ADDRESS",
                help="Run the targets' calls on this Dask scheduler's workers (tcp://host:8786); "
                "the trials and their evidence stay here.",
            ),
        ],
    )


prices_option = click.option(
    "--prices",
    type=click.Path(path_type=Path),
    envvar="ASSAY_PRICES",
    help="Price file (YAML/JSON, USD per million tokens) [env: ASSAY_PRICES].",
)
"""``--prices``, declared once for ``run`` and ``resume`` (a resume prices its new calls,
and re-checks a cost_limit's frozen price, with the same table as the run)."""


def cache_options(func: F) -> F:
    """``--cache/--no-cache`` and ``--cache-expiry``, declared once for ``run`` and
    ``resume``. Unset (``None``), ``run`` goes without the cache and ``resume`` does what
    the run did (its manifest says whether it used the cache, and the expiry)."""
    return _declare(
        func,
        [
            click.option(
                "--cache/--no-cache",
                default=None,
                help="Answer model calls from the response cache "
                "[run: off; resume: as the run did].",
            ),
            click.option(
                "--cache-expiry",
                help="How long new cache entries stay fresh: 30m, 12h, 7d, 2w or never "
                "[run: 7d; resume: the run's].",
            ),
        ],
    )


SIGN_OPTION = click.option(
    "--sign",
    "sign_key",
    metavar="KEY",
    type=click.Path(path_type=Path),
    help="Sign the run with this Ed25519 private key (PEM) as soon as it is sealed.",
)
"""``--sign KEY`` of ``run`` and ``resume``, declared once."""


if TYPE_CHECKING:  # click >= 8.2 types ParamType by its value; 8.1 is not generic
    _LimitType = click.ParamType[int | tuple[int, int], object]
else:
    _LimitType = click.ParamType


class SampleLimit(_LimitType):
    """``--limit N`` (the first N samples) or ``--limit A-B`` (samples A to B, 1-based and
    inclusive, as Inspect reads it): an int, or the 0-based ``(start, stop)`` slice."""

    name = "N|A-B"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | tuple[int, int]:
        if isinstance(value, int | tuple):
            return value
        first, dash, last = str(value).strip().partition("-")
        if first.isdigit() and (not dash or last.isdigit()):
            start, stop = int(first), int(last) if dash else None
            if stop is None and start >= 1:
                return start
            if stop is not None and 1 <= start <= stop:
                return (start - 1, stop)
        self.fail(
            f"{value!r} is neither a count N >= 1 nor a range A-B with 1 <= A <= B "
            "(e.g. --limit 10 or --limit 10-20)",
            param,
            ctx,
        )


def python_task_options(func: F) -> F:
    """The options only a Python task can use (``file.py@task``)."""
    return _declare(
        func,
        [
            click.option(
                "--model", "-m", "models", multiple=True, help="Model(s) for Python tasks."
            ),
            click.option("-T", "task_args", multiple=True, help="Task argument key=value."),
            click.option("-M", "model_args", multiple=True, help="Model argument key=value."),
            click.option(
                "--model-role",
                "model_roles",
                multiple=True,
                metavar="ROLE=MODEL",
                help="Bind a model to a role, e.g. grader=openai/gpt-4o.",
            ),
            click.option(
                "--model-base-url",
                help="Server of the models (OpenAI-compatible), e.g. http://127.0.0.1:8080/v1.",
            ),
            click.option(
                "--solver",
                help="Run this solver instead of the tasks' own: a registered name, or "
                "file.py@name.",
            ),
            click.option("-S", "solver_args", multiple=True, help="Solver argument key=value."),
            click.option(
                "--approval",
                type=click.Path(path_type=Path),
                help="Approval policies for tool calls: a YAML or JSON file of approvers.",
            ),
            click.option("--epochs", type=click.IntRange(1), help="Override the tasks' epochs."),
            click.option(
                "--limit",
                type=SampleLimit(),
                help="Run only the first N samples, or samples A to B (1-based, inclusive: 10-20).",
            ),
            click.option(
                "--sample-id", "sample_ids", multiple=True, help="Run only these sample ids."
            ),
            click.option(
                "--log-dir",
                type=click.Path(path_type=Path),
                default=Path("runs"),
                show_default=True,
            ),
            click.option("--max-tasks", type=click.IntRange(1), default=1, show_default=True),
            click.option(
                "--max-connections", type=click.IntRange(1), help="Calls in flight per model."
            ),
            click.option("--retry-on-error", type=click.IntRange(0), default=0, show_default=True),
            click.option(
                "--score-on-error", is_flag=True, help="Score errored samples on their last state."
            ),
        ],
    )


PYTHON_ONLY = (
    "models",
    "task_args",
    "model_args",
    "model_roles",
    "model_base_url",
    "solver",
    "solver_args",
    "approval",
    "epochs",
    "limit",
    "sample_ids",
    "log_dir",
    "max_tasks",
    "max_connections",
    "retry_on_error",
    "score_on_error",
    *GENERATE_NAMES,
)
"""``run``'s options that only a Python task can use (a YAML spec's targets are programs
and endpoints, its samples and repetitions are the spec's): given with a YAML spec they
are refused rather than ignored."""


def parse_roles(values: tuple[str, ...]) -> dict[str, str]:
    """``--model-role grader=openai/gpt-4o`` values as ``{"grader": "openai/gpt-4o"}``."""
    roles: dict[str, str] = {}
    for value in values:
        role, sep, model = value.partition("=")
        if not (sep and role.strip() and "/" in model):
            raise ConfigError("model.role_value", value=value)
        roles[role.strip()] = model.strip()
    return roles


def eval_options(python: dict[str, Any]) -> dict[str, Any]:
    """The Python-task options given (``python_task_options``' values) as ``eval``'s
    keyword arguments (models aside: they are ``eval``'s second argument)."""
    from assay.cli._tasks import parse_assignments

    return {
        "task_args": parse_assignments(python["task_args"], "-T"),
        "model_args": parse_assignments(python["model_args"], "-M"),
        "model_roles": parse_roles(python["model_roles"]),
        "model_base_url": python["model_base_url"],
        "solver": python["solver"],
        "solver_args": parse_assignments(python["solver_args"], "-S"),
        "approval": python["approval"],
        "epochs": python["epochs"],
        "limit": python["limit"],
        "sample_id": list(python["sample_ids"]) or None,
        "log_dir": python["log_dir"],
        "max_tasks": python["max_tasks"],
        "max_connections": python["max_connections"],
        "retry_on_error": python["retry_on_error"],
        "score_on_error": python["score_on_error"],
    }


def refuse_python_only_options(context: click.Context) -> None:
    """A ConfigError naming the first Python-only option given on the command line."""
    for param in context.command.params:
        if param.name not in PYTHON_ONLY:
            continue
        source = context.get_parameter_source(param.name)
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            raise ConfigError("task.python_only", option=max(param.opts, key=len))
