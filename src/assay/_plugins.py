"""Plugins: components an installed distribution offers through entry points.

A package names its components in its pyproject, one group per kind::

    [project.entry-points."assay.providers"]
    acme = "acme_assay:acme_provider"      # get_model("acme/any-name")
    [project.entry-points."assay.scorers"]
    fuzzy = "acme_assay:fuzzy"             # a @scorer factory
    [project.entry-points."assay.solvers"]
    plan_first = "acme_assay:plan_first"   # a @solver factory
    [project.entry-points."assay.sandboxes"]
    docker = "acme_assay:DockerSandbox"    # make_sandbox("docker")
    [project.entry-points."assay.hooks"]
    audit = "acme_assay:AuditHooks"        # a Hooks subclass, called by every run

Nothing is scanned at ``import assay``: reading every installed distribution's metadata
costs tens of milliseconds, so a group is read only when a name is not found among the
built-ins (or, for hooks, when a run starts). A plugin that fails to load is one line
naming it, never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from assay.errors import ConfigError

GROUPS = {
    "provider": "assay.providers",
    "scorer": "assay.scorers",
    "solver": "assay.solvers",
    "sandbox": "assay.sandboxes",
    "hooks": "assay.hooks",
}


def _points(kind: str) -> Any:
    group = GROUPS[kind]
    if not _declared(group):
        return ()
    from importlib.metadata import entry_points  # 30-50 ms: only when a package has some

    return entry_points(group=group)


def _declared(group: str) -> bool:
    """Whether any distribution on ``sys.path`` declares entry points of *group*: a look
    at each ``entry_points.txt``, a few milliseconds where importing importlib.metadata
    and letting it parse them all is tens (every run asks for hooks)."""
    header = f"[{group}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")) and _mentions(entry, header):
                    return True
    return False


def _mentions(entry: os.DirEntry[str], header: str) -> bool:
    try:
        with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as handle:
            return header in handle.read()
    except OSError:  # none, or unreadable: importlib.metadata would skip it too
        return False


def plugin_names(kind: str) -> list[str]:
    """The names installed distributions offer for *kind*."""
    return sorted({point.name for point in _points(kind)})


def load_plugin(kind: str, name: str) -> Any | None:
    """The object the entry point *name* of *kind*'s group refers to, or ``None``."""
    for point in _points(kind):
        if point.name == name:
            return _load(kind, point)
    return None


def load_plugins(kind: str) -> list[tuple[str, Any]]:
    """Every entry point of *kind*'s group, loaded, by name (sorted: a stable order)."""
    return [(point.name, _load(kind, point)) for point in sorted(_points(kind), key=_key)]


def _key(point: Any) -> tuple[str, str]:
    return (point.name, point.value)


def _load(kind: str, point: Any) -> Any:
    try:
        return point.load()
    except Exception as exc:  # any import error of someone else's package: one line
        raise ConfigError(
            "plugin.load",
            group=GROUPS[kind],
            name=point.name,
            value=point.value,
            error=f"{type(exc).__name__}: {exc}",
        ) from None
