"""What a Task or Sample says about its sandboxes, in one normal form.

``Task(sandbox=...)`` and ``Sample(sandbox=...)`` take what Inspect users write:

- ``"bwrap"`` (a provider name): one sandbox called ``default``;
- ``("bwrap", {"network": True})``: a provider and its options;
- ``{"default": "bwrap", "db": ("local", {})}``: several named sandboxes, the first one
  being what ``sandbox()`` returns when ``default`` is not among them.

Each becomes a tuple of ``SandboxSpec``; the same value always gives the same tuple, which
is what the frozen run spec records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from assay.errors import ConfigError
from assay.sandbox._context import DEFAULT_NAME
from assay.sandbox._environment import SandboxEnvironment
from assay.sandbox._registry import make_sandbox


class SandboxSpec(msgspec.Struct, frozen=True):
    """One sandbox a sample gets: its name, provider and the provider's options."""

    provider: str
    options: dict[str, Any] = {}
    name: str = DEFAULT_NAME

    def make(self) -> SandboxEnvironment:
        """A new, not yet created, environment of this spec."""
        try:
            return make_sandbox(self.provider, **self.options)
        except TypeError as exc:  # an option the provider does not take
            raise ConfigError("sandbox.options", provider=self.provider, reason=str(exc)) from None


def sandbox_specs(value: Any, where: str) -> tuple[SandboxSpec, ...]:
    """*value* (see the module docstring) as specs; *where* names it in an error."""
    if value is None:
        return ()
    if isinstance(value, SandboxSpec):
        return (value,)
    if isinstance(value, Mapping):
        return tuple(_one(item, where, str(name)) for name, item in value.items())
    return (_one(value, where, DEFAULT_NAME),)


def specs_record(specs: tuple[SandboxSpec, ...]) -> list[dict[str, Any]] | None:
    """The specs as JSON for the frozen run spec (``None`` when there are none)."""
    return [msgspec.to_builtins(spec) for spec in specs] or None


def _one(value: Any, where: str, name: str) -> SandboxSpec:
    if isinstance(value, SandboxSpec):
        return msgspec.structs.replace(value, name=name)
    if isinstance(value, str) and value:
        return SandboxSpec(value, {}, name)
    if (
        isinstance(value, tuple | list)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], Mapping | None)
    ):
        return SandboxSpec(value[0], dict(value[1] or {}), name)
    raise ConfigError("sandbox.spec", where=where, got=repr(value)[:80])
