"""Providers by name: ``get_model("mock/echo")`` finds the ``mock`` provider.

Built-in providers register through the same decorator a plugin uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.errors import ConfigError
from assay.model._config import GenerateConfig
from assay.model._model import Model, ModelAPI

ProviderFactory = Callable[..., ModelAPI]
_providers: dict[str, ProviderFactory] = {}


def modelapi(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory under *name*; it is called as ``factory(model_name,
    config, **model_args)`` and returns a ModelAPI."""

    def register(factory: ProviderFactory) -> ProviderFactory:
        _providers[name] = factory
        return factory

    return register


def get_model(model: str | Model, config: GenerateConfig | None = None, **model_args: Any) -> Model:
    """Resolve ``provider/name`` (or pass a Model through)."""
    if isinstance(model, Model):
        return model
    _load_builtin_providers()
    provider, sep, name = model.partition("/")
    if not sep or not name:
        raise ConfigError("model.name", model=model)
    factory = _providers.get(provider)
    if factory is None:
        raise ConfigError("model.provider", model=model, known=", ".join(sorted(_providers)))
    return Model(model, factory(name, config or GenerateConfig(), **model_args), config)


def _load_builtin_providers() -> None:
    # each registers its provider on import; SDKs and native code load on first use
    from assay.model import _anthropic, _local, _mock  # noqa: F401
