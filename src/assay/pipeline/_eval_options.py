"""The options of ``eval`` and ``assay run file.py``, defined once, and how the keyword
arguments of ``eval`` become them (a misspelt one named, GenerateConfig fields and
sample limits gathered)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import msgspec

from assay.errors import ConfigError
from assay.model import DEFAULT_EXPIRY, GenerateConfig
from assay.pipeline._display_options import take_display_options
from assay.pipeline._limits_option import LIMIT_FIELDS
from assay.pipeline._progress import ProgressCallback


class EvalOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The options of ``eval`` and ``assay run file.py``, defined once.

    Attributes:
        log_dir: folder the run directories are created in.
        output: the run directory itself, for an eval of one task × model unit (the
            CLI's ``-o``); several units, or ``task_retries``, need ``log_dir``.
        max_tasks: task × model units running at once.
        max_samples: trials in flight per unit.
        max_connections: calls in flight per model (overrides the model's config).
        epochs: override every task's epochs.
        limit: run only the first N samples, or a (start, stop) slice.
        sample_id: run only these sample ids.
        fail_on_error: True (default) stops on the first error, False never, a fraction
            or count tolerates that many errored samples.
        continue_on_fail: with fail_on_error reached, finish the run before failing.
        retry_on_error: times an errored sample is re-queued at the end of the run.
        score_on_error: score errored samples on the state they reached.
        max_attempts: attempts per trial on infrastructure failures.
        gate_minimum: gate every unit on this minimum pass rate.
        task_args: ``-T`` arguments for tasks loaded from files.
        model_args: provider arguments (``-M``); those naming a GenerateConfig field
            (``timeout``, ``max_retries``, ...) set the model's config. Never a key:
            ``api_key`` is refused (keys come from the environment).
        model_base_url: the server of every model in the run (``--model-base-url``), for
            providers that take one (``openai``: any OpenAI-compatible server).
        task_retries: times a unit whose result is ``error`` is run again from scratch
            (into a new directory); the last attempt's result is returned.
        handle_signals: Ctrl-C/SIGTERM interrupt cleanly (the CLI sets this).
        cache: answer model calls from the response cache and fill it (off by default;
            the folder is ``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay/responses``).
        cache_expiry: how long a new entry stays fresh: ``30m``, ``12h``, ``7d``, seconds,
            or ``never``.
        prices: a YAML/JSON price file (USD per million tokens by ``provider/name``);
            default ``$ASSAY_PRICES``, then ``set_price`` and the built-in table.
        progress: called with each unit's ``Progress`` every half second, and once at
            its end (``RunOptions.progress``).
        max_sandboxes: trials holding sandboxes at once, per unit (``None``: no cap
            beyond ``max_samples``).
        sandbox_cleanup: ``False`` keeps every sample's sandbox for debugging and
            prints where (``--no-sandbox-cleanup``).
        generate_config: GenerateConfig fields set for the whole eval (``temperature``,
            ``max_tokens``, ``seed``, ``reasoning_effort``...: ``eval`` takes them as
            keyword arguments, as Inspect's does; the CLI's ``--temperature`` etc.). They
            win over the task's own config and are recorded so ``resume`` applies them.
        model_roles: models by role (``{"grader": "openai/gpt-4o"}``, the CLI's
            ``--model-role``) for ``get_model(role=...)``; they win over the task's own
            ``model_roles`` and are recorded in the run's spec.
        solver: a solver (or list of them) for every task instead of its own, or the name
            of a registered one (the CLI's ``--solver``), made with *solver_args* (``-S``).
        sample_limits: ``message_limit``, ``token_limit``, ``time_limit``,
            ``working_limit``, ``cost_limit`` for every task instead of its own (``eval``
            takes them as keyword arguments, as Inspect's does); recorded for ``resume``.
        approval: tool-call approval policies (``assay.approval``) for every task
            instead of its own; recorded in the spec, and made again by ``resume``
            (and a cluster's workers) from their registered approvers.
        cluster: the address of a Dask scheduler (``tcp://host:8786``): each trial's
            solver and scorers run on its workers, the task rebuilt there from its
            file as ``resume`` rebuilds it (docs/cluster.md).
    """

    log_dir: Path = Path("runs")
    output: Path | None = None
    max_tasks: int = 1
    max_samples: int = 16
    max_connections: int | None = None
    epochs: int | None = None
    limit: int | tuple[int, int] | None = None
    sample_id: str | int | list[str | int] | None = None
    fail_on_error: bool | float | None = None
    continue_on_fail: bool = False
    retry_on_error: int = 0
    score_on_error: bool = False
    max_attempts: int = 3
    gate_minimum: float | None = None
    task_args: dict[str, Any] = {}
    model_args: dict[str, Any] = {}
    model_base_url: str | None = None
    task_retries: int = 0
    handle_signals: bool = False
    cache: bool = False
    cache_expiry: str | float = DEFAULT_EXPIRY
    prices: Path | None = None
    progress: ProgressCallback | None = None
    max_sandboxes: int | None = None
    sandbox_cleanup: bool = True
    generate_config: GenerateConfig = GenerateConfig()
    model_roles: dict[str, Any] = {}
    solver: Any = None
    solver_args: dict[str, Any] = {}
    sample_limits: dict[str, Any] = {}
    approval: Any = None
    cluster: str | None = None


def eval_options(options: dict[str, Any]) -> EvalOptions:
    """*options* as EvalOptions: a misspelt one is a ConfigError naming the closest
    (not a TypeError), and a folder or file may be given as a str."""
    known = EvalOptions.__struct_fields__
    take_display_options(options)
    generate = {k: options.pop(k) for k in list(options) if _generate_field(k, known)}
    limits = {k: options.pop(k) for k in list(options) if k in LIMIT_FIELDS}
    if limits:
        options["sample_limits"] = {k: v for k, v in limits.items() if v is not None}
    if generate:
        try:
            options["generate_config"] = GenerateConfig.from_settings(generate)
        except msgspec.ValidationError as exc:
            raise ConfigError("model.args", model="eval()", args=str(exc)) from None
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            suggestion = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError("eval.unknown_option", option=name, suggestion=suggestion)
    for name in ("log_dir", "output", "prices"):
        if isinstance(options.get(name), str):
            options[name] = Path(options[name])
    return EvalOptions(**options)


def _generate_field(name: str, known: tuple[str, ...]) -> bool:
    """An eval keyword that is a GenerateConfig field and not an EvalOptions one
    (``max_connections`` is both: the eval's own option wins)."""
    return name in GenerateConfig.__struct_fields__ and name not in known
