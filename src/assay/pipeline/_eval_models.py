"""The models an ``eval`` unit runs on: by name or object, with ``-M`` arguments that
may never carry a secret (they would land in the spec, the shell history, the process list)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.model import GenerateConfig, Model, get_model
from assay.task import Task

if TYPE_CHECKING:
    from assay.pipeline._eval_options import EvalOptions


def unit_models(
    model: str | Model | Sequence[str | Model] | None, task: Task, opts: EvalOptions
) -> list[Model]:
    """The models *task* runs on: those asked for, else the task's own (never a mock
    chosen silently), each with the eval's ``max_connections`` and ``-M`` arguments."""
    names = [model] if isinstance(model, str | Model) else list(model or [])
    if not names and task.model is None:  # never a silent mock: its scores would mean nothing
        raise ConfigError("task.no_model", task=task.name)
    names = names or [task.model or ""]
    config = GenerateConfig(max_connections=opts.max_connections)
    args = unit_model_args(opts)
    return [get_model(name, config, **args) for name in names]


_SECRET_WORDS = ("key", "token", "secret", "password", "authorization", "auth", "cookie")


def _secret_name(name: str) -> bool:
    """``api_key``, ``auth_token``, ``Authorization``, ``X-Api-Key``: names of secrets."""
    words = name.lower().replace("-", "_").split("_")
    return any(word in _SECRET_WORDS for word in words)


def unit_model_args(opts: EvalOptions) -> dict[str, Any]:
    """``-M`` arguments and ``--model-base-url``; a ConfigError for a key among them
    (it would be in the spec, the shell history and the process list)."""
    for name, value in opts.model_args.items():
        inner = [str(k) for k in value] if isinstance(value, dict) else []  # e.g. headers
        for key in [name, *inner]:
            if _secret_name(key):
                option = f"-M {name}=..." if key == name else f"-M {name}={{{key}: ...}}"
                raise ConfigError("model.api_key_arg", option=option, env="OPENAI_API_KEY")
    args = dict(opts.model_args)
    if opts.model_base_url is not None:
        args["base_url"] = opts.model_base_url
    return args
