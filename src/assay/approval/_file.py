"""Approval policies from a file, as Inspect's ``--approval approval.yaml``.

The file (YAML, or JSON, which YAML reads too) lists approvers, each by its registered
name with the ``tools`` globs it decides about; every other key is an argument of the
approver's factory::

    approvers:
      - name: auto
        tools: ["add", "lookup*"]
      - name: auto
        tools: "*"
        decision: reject

An approver of the task's own file (``@approver``) is found once that file is
imported, so a file is read when a task is prepared, not when the option is given.
The policies made are recorded like any others (name, arguments, globs), so a resume
makes them again without the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay._registry import lookup
from assay.approval._approval import ApprovalPolicy, Approver
from assay.errors import ConfigError


def policies_from_file(path: Path) -> tuple[ApprovalPolicy, ...]:
    """The policies the approval file at *path* lists, in its order."""
    import yaml  # deferred: only an approval file needs it

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError("approval.file", path=str(path), reason=reason) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        reason = f"not YAML or JSON ({str(exc).splitlines()[0]})"
        raise ConfigError("approval.file", path=str(path), reason=reason) from None
    entries = loaded.get("approvers") if isinstance(loaded, dict) else None
    if not isinstance(entries, list) or not entries:
        reason = "it has no 'approvers:' list"
        raise ConfigError("approval.file", path=str(path), reason=reason)
    return tuple(_policy(path, number, entry) for number, entry in enumerate(entries, 1))


def _policy(path: Path, number: int, entry: Any) -> ApprovalPolicy:
    """Approver *number* of the file: its factory, made with the entry's other keys."""
    where = f"{path}: approver {number}"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError("approval.file", path=where, reason="it has no 'name:'")
    args = dict(entry)
    name, tools = args.pop("name"), args.pop("tools", None)
    if not (isinstance(tools, str) or (isinstance(tools, list) and tools)):
        reason = f"{name!r} has no 'tools:' (a glob, or a list of them)"
        raise ConfigError("approval.file", path=where, reason=reason)
    factory = lookup("approver", name)
    if factory is None:
        reason = f"no approver is registered as {name!r} (built in: auto, human)"
        raise ConfigError("approval.file", path=where, reason=reason)
    try:
        made: Approver = factory(**args)
    except TypeError as exc:
        raise ConfigError("approval.file", path=where, reason=f"{name!r}: {exc}") from None
    return ApprovalPolicy(made, [str(t) for t in tools] if isinstance(tools, list) else tools)
