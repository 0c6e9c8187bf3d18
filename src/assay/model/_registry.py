"""Providers by name: ``get_model("mock/echo")`` finds the ``mock`` provider.

Built-in providers register through the same decorator a plugin may use; an installed
package offers one as an ``assay.providers`` entry point (``acme = "pkg.mod:factory"``,
the factory taking ``(model_name, config, **model_args)``), read only when a name is not
a built-in's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import msgspec

from assay._plugins import load_plugin, plugin_names
from assay.errors import ConfigError
from assay.model._config import GenerateConfig
from assay.model._model import Model, ModelAPI

ProviderFactory = Callable[..., ModelAPI]
_providers: dict[str, ProviderFactory] = {}
_built: ContextVar[list[Model] | None] = ContextVar("assay_models_built", default=None)
_roles: ContextVar[ModelRoles | None] = ContextVar("assay_model_roles", default=None)


class ModelRoles:
    """The models a run binds to roles (``{"grader": "openai/gpt-4o"}``), each made on
    first use with the run's provider arguments, then shared by every trial; and the
    *active* model, the one under evaluation (``get_model()`` without a name)."""

    def __init__(
        self,
        roles: Mapping[str, str | Model],
        model_args: Mapping[str, Any],
        active: Model | None = None,
    ) -> None:
        self.roles = dict(roles)
        self.model_args = dict(model_args)
        self.active = active
        self._made: dict[str, Model] = {}

    def get(self, role: str) -> Model | None:
        """The model bound to *role*, or None."""
        bound = self.roles.get(role)
        if bound is None or isinstance(bound, Model):
            return bound
        if role not in self._made:
            self._made[role] = get_model(bound, **self.model_args)
        return self._made[role]


@contextmanager
def model_roles_scope(roles: ModelRoles | None) -> Iterator[None]:
    """Bind *roles* for ``get_model(role=...)`` inside the block (a run's trials)."""
    token = _roles.set(roles)
    try:
        yield
    finally:
        _roles.reset(token)


def bound_role(role: str) -> Model | None:
    """The model the running task binds to *role*, or None."""
    roles = _roles.get()
    return roles.get(role) if roles is not None else None


def active_model() -> Model | None:
    """The model the running task is evaluating (its connections and settings), if any."""
    roles = _roles.get()
    return roles.active if roles is not None else None


def role_names(roles: Mapping[str, str | Model] | None) -> dict[str, str]:
    """*roles* by model name, as a run's spec records them."""
    return {r: m.name if isinstance(m, Model) else m for r, m in sorted((roles or {}).items())}


@contextmanager
def models_built() -> Iterator[list[Model]]:
    """Collect every Model ``get_model`` makes inside the block, so a run can close the
    ones made on its behalf when it ends (a grader a user's scorer builds, say): their
    connections belong to the run's event loop, which ends with it."""
    built: list[Model] = []
    token = _built.set(built)
    try:
        yield built
    finally:
        _built.reset(token)


def modelapi(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory under *name*; it is called as ``factory(model_name,
    config, **model_args)`` and returns a ModelAPI."""

    def register(factory: ProviderFactory) -> ProviderFactory:
        _providers[name] = factory
        return factory

    return register


def get_model(
    model: str | Model | None = None,
    config: GenerateConfig | None = None,
    *,
    role: str | None = None,
    default: str | Model | None = None,
    **model_args: Any,
) -> Model:
    """Resolve ``provider/name`` (or pass a Model through).

    Without *model*, as in Inspect: the model bound to *role* (``Task(model_roles=)``,
    ``--model-role``) when the running task binds it, else *default*, else the model the
    running task is evaluating. *model_args* that name a GenerateConfig field
    (``timeout``, ``max_retries``, ...) set the model's config; the rest go to the
    provider's factory.
    """
    if model is None:
        return _unnamed(role, default, config, model_args)
    if isinstance(model, Model):
        return model
    provider, sep, name = model.partition("/")
    if not sep or not name:
        raise ConfigError("model.name", model=model)
    _load_builtin_provider(provider)
    factory = _providers.get(provider) or _installed_provider(provider)
    if factory is None:
        known = ", ".join(sorted(set(_providers) | set(plugin_names("provider"))))
        raise ConfigError("model.provider", model=model, known=known)
    fields = GenerateConfig.__struct_fields__
    settings = {k: v for k, v in model_args.items() if k in fields}
    args = {k: v for k, v in model_args.items() if k not in fields}
    if settings:
        config = (config or GenerateConfig()).merge(_config(model, settings))
    config = config or GenerateConfig()
    _check_args(model, factory, name, config, args)
    made = Model(model, factory(name, config, **args), config)
    collecting = _built.get()
    if collecting is not None:
        collecting.append(made)
    return made


def _installed_provider(provider: str) -> ProviderFactory | None:
    """The factory an installed package offers as *provider* (an ``assay.providers``
    entry point), remembered like a built-in; read only for a name no built-in has."""
    factory = load_plugin("provider", provider)
    if factory is not None:
        _providers[provider] = factory
    return factory


def _unnamed(
    role: str | None,
    default: str | Model | None,
    config: GenerateConfig | None,
    model_args: dict[str, Any],
) -> Model:
    """``get_model()`` without a name: the role's model, the default, the active one."""
    roles = _roles.get()
    bound = roles.get(role) if roles is not None and role is not None else None
    if bound is not None:
        return bound
    if default is not None:
        return get_model(default, config, **model_args)
    active = roles.active if roles is not None else None
    if active is not None and config is None and not model_args:
        return active
    from assay.solver._state import current_state  # the solver layer sits above this one

    state = current_state()
    if state is None or not state.model:
        raise ConfigError("model.no_active")
    return get_model(state.model, config, **model_args)


def _config(model: str, settings: dict[str, Any]) -> GenerateConfig:
    try:
        return GenerateConfig.from_settings(settings)
    except msgspec.ValidationError as exc:
        raise ConfigError("model.args", model=model, args=str(exc)) from None


def _check_args(
    model: str, factory: ProviderFactory, name: str, config: GenerateConfig, args: dict[str, Any]
) -> None:
    """A ConfigError naming the arguments *factory* does not take (not a TypeError)."""
    try:
        inspect.signature(factory).bind(name, config, **args)
    except TypeError:
        raise ConfigError("model.args", model=model, args=", ".join(sorted(args))) from None


_BUILT_IN = {
    "anthropic": "assay.model._anthropic",
    "google": "assay.model._google",
    "local": "assay.model._local",
    "mock": "assay.model._mock",
    "mockllm": "assay.model._mock",
    "openai": "assay.model._openai",
}
"""The built-in providers' modules by name (the services' profiles are in ``_profiles``)."""


def _load_builtin_provider(provider: str) -> None:
    """Import the built-in module that registers *provider*, if it is not registered
    yet: providers register on import, and the registry must not import them (their
    SDKs and native code load on first use). Only *provider*'s own: an ``openai/``
    run does not load the Anthropic, Google and local ones (2-3 ms of its start). A
    name of no such module (a service's profile, a plugin, a typo) loads them all, as
    the error for an unknown one lists them."""
    if provider in _providers:
        return
    module = _BUILT_IN.get(provider)
    if module is not None:
        import importlib

        importlib.import_module(module)
        return
    from assay.model import _anthropic, _google, _local, _mock, _openai, _profiles  # noqa: F401
