"""Sandbox providers by name: the built-ins and those installed as plugins.

A plugin names its provider in the ``assay.sandboxes`` entry point group (e.g. in its
pyproject: ``[project.entry-points."assay.sandboxes"] docker = "pkg.mod:DockerSandbox"``);
the entry point loads a callable that takes keyword options and returns a
``SandboxEnvironment``. ``register_sandbox`` does the same from code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay._plugins import GROUPS, load_plugin, plugin_names
from assay.errors import ConfigError
from assay.sandbox._environment import SandboxEnvironment

ENTRY_POINT_GROUP = GROUPS["sandbox"]
DEFAULT_PROVIDER = "bwrap"

SandboxFactory = Callable[..., SandboxEnvironment]
_providers: dict[str, SandboxFactory] = {}
_BUILT_IN = {
    "local": ("assay.sandbox._local", "LocalSandbox"),
    "bwrap": ("assay.sandbox._bwrap", "BwrapSandbox"),
}
"""The built-in providers, imported when first made: a run whose samples have no
sandbox never loads them (processes, reaping, bubblewrap's arguments)."""


def register_sandbox(name: str, factory: SandboxFactory) -> None:
    """Make *factory* the provider called *name*."""
    _providers[name] = factory


def sandbox_providers() -> list[str]:
    """The names of every provider: built-in, registered and installed."""
    return sorted(set(_providers) | set(_BUILT_IN) | set(plugin_names("sandbox")))


def make_sandbox(name: str | None = None, **options: Any) -> SandboxEnvironment:
    """A new (not yet created) sandbox of provider *name* (default ``bwrap``)."""
    label = name or DEFAULT_PROVIDER
    factory = _providers.get(label) or _built_in(label) or _from_entry_point(label)
    if factory is None:
        raise ConfigError("sandbox.unknown", name=label, known=", ".join(sandbox_providers()))
    return factory(**options)


def _built_in(name: str) -> SandboxFactory | None:
    if name not in _BUILT_IN:
        return None
    import importlib

    module, attribute = _BUILT_IN[name]
    factory: SandboxFactory = getattr(importlib.import_module(module), attribute)
    _providers[name] = factory
    return factory


def _from_entry_point(name: str) -> SandboxFactory | None:
    factory: SandboxFactory | None = load_plugin("sandbox", name)
    if factory is not None:
        _providers[name] = factory
    return factory
