"""``sandbox()``: the current sample's sandbox, from anywhere in a solver, tool or scorer.

The pipeline creates a sample's sandboxes before its solver runs and binds them to a
context variable for the trial (``sandbox_scope``); code deep inside a tool asks for
``sandbox()`` without the environment being passed around, as in Inspect. Each asyncio
task (and each worker thread started from it) sees its own sample's binding.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

from assay._scope import Scope
from assay.errors import ConfigError
from assay.sandbox._environment import SandboxEnvironment

DEFAULT_NAME = "default"
_current: ContextVar[Mapping[str, SandboxEnvironment] | None] = ContextVar(
    "assay_sandboxes", default=None
)


def sandbox(name: str | None = None) -> SandboxEnvironment:
    """The current sample's sandbox called *name* (its only or ``default`` one if None)."""
    environments = _current.get()
    if not environments:
        raise ConfigError("sandbox.none")
    if name is None:
        if DEFAULT_NAME in environments:
            return environments[DEFAULT_NAME]
        return next(iter(environments.values()))
    found = environments.get(name)
    if found is None:
        raise ConfigError("sandbox.no_such_name", name=name, known=", ".join(environments))
    return found


def current_sandboxes() -> Mapping[str, SandboxEnvironment]:
    """Every sandbox bound to the current sample, by name (empty outside one)."""
    return _current.get() or {}


def sandbox_scope(
    environments: Mapping[str, SandboxEnvironment],
) -> Scope[dict[str, SandboxEnvironment]]:
    """Make *environments* what ``sandbox()`` returns inside the block."""
    return Scope(_current, dict(environments))
