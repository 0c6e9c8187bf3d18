"""A spec's targets: each one's fields checked and frozen into a ``TargetSpec``.

What a target runs (a script, an argv, a callable, a URL), how a program is isolated
(``sandbox``, ``network``), kept alive (``protocol``, ``workers``) and what environment
it gets (``env``); a script's file and a callable's module in the spec folder are pinned
by digest, so a changed product changes the spec's digest.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import msgspec

from assay.errors import ConfigError
from assay.spec._model import PYTHON, TargetSpec
from assay.spec._paths import resolve_inside

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class RawTarget(msgspec.Struct, forbid_unknown_fields=True):
    """A target as a person writes it in the spec (unknown fields refused)."""

    id: str
    script: str | None = None
    argv: list[str] | None = None
    args: list[str] = []
    callable: str | None = None
    url: str | None = None
    headers_from_env: dict[str, str] | None = None
    timeout: float = 30.0
    max_output_bytes: int = 1_048_576
    env: list[str] | dict[str, str | None] | None = None
    sandbox: str | None = None
    network: bool | None = None
    protocol: str | None = None
    workers: int | None = None


def program_target(root: Path, raw: RawTarget, display: str, index: int) -> TargetSpec:
    """The frozen ``TargetSpec`` of ``targets[index]``, each field checked, the file of a
    script or a callable's module pinned by digest."""
    where = f"targets[{index}]"
    kinds = [name for name in ("script", "argv", "callable", "url") if getattr(raw, name)]
    if len(kinds) != 1:
        reason = f"{where}: give exactly one of 'script', 'argv', 'callable' or 'url'"
        raise ConfigError("spec.shape", path=display, reason=reason)
    if not raw.timeout > 0 or raw.timeout > 86_400 or raw.max_output_bytes <= 0:
        reason = f"{where}: 'timeout' and 'max_output_bytes' must be positive"
        raise ConfigError("spec.shape", path=display, reason=reason)
    common = {"id": raw.id, "timeout": raw.timeout, "max_output_bytes": raw.max_output_bytes}
    if raw.env is not None:
        _only_a_program(raw, f"{where}.env", "takes an environment", display)
    common["env"] = _environment(raw.env, f"{where}.env", display)
    common.update(_isolation(raw, where, display))
    common.update(_persistence(raw, where, display))
    if raw.url:
        if not raw.url.startswith(("http://", "https://")):
            reason = f"{where}.url: must be an http:// or https:// URL"
            raise ConfigError("spec.shape", path=display, reason=reason)
        return TargetSpec(kind="http", url=raw.url, headers_from_env=raw.headers_from_env, **common)  # type: ignore[arg-type]
    if raw.callable:
        digest = _module_digest(root, raw.callable)
        return TargetSpec(kind="callable", callable=raw.callable, digest=digest, **common)  # type: ignore[arg-type]
    if raw.script:
        real = resolve_inside(root, raw.script, f"{where}.script")
        digest = "sha256:" + hashlib.sha256(real.read_bytes()).hexdigest()
        # "./name" so the OS runs the pinned file in the spec folder, never one on PATH
        local = raw.script if "/" in raw.script else f"./{raw.script}"
        argv = (PYTHON, raw.script) if raw.script.endswith(".py") else (local,)
        return TargetSpec(
            kind="subprocess",
            argv=(*argv, *raw.args),
            script=raw.script,
            digest=digest,
            **common,  # type: ignore[arg-type]
        )
    assert raw.argv is not None
    if any("\x00" in part for part in raw.argv + raw.args):
        raise ConfigError("spec.shape", path=display, reason=f"{where}.argv: contains a NUL byte")
    _check_no_file_beside(root, raw.argv, where, display)
    return TargetSpec(kind="subprocess", argv=(*raw.argv, *raw.args), **common)  # type: ignore[arg-type]


def _only_a_program(raw: RawTarget, field: str, does: str, display: str) -> None:
    """Refuse *field* on a target that is not a program (a URL, a callable)."""
    if raw.url or raw.callable:
        reason = f"{field}: only a program ('script' or 'argv') {does}"
        raise ConfigError("spec.shape", path=display, reason=reason)


TARGET_SANDBOXES = ("bwrap", "local")


def _isolation(raw: RawTarget, where: str, display: str) -> dict[str, Any]:
    """A program's ``sandbox`` and ``network`` as the frozen spec holds them (left out
    when not declared, so older specs keep their digests)."""
    if raw.sandbox is None and raw.network is None:
        return {}
    _only_a_program(raw, f"{where}.sandbox", "runs in a sandbox", display)
    if raw.sandbox is not None and raw.sandbox not in TARGET_SANDBOXES:
        reason = (
            f"{where}.sandbox: unknown sandbox {raw.sandbox!r}; a program target takes "
            f"{' or '.join(repr(name) for name in TARGET_SANDBOXES)}"
        )
        raise ConfigError("spec.shape", path=display, reason=reason)
    if raw.network is not None and raw.sandbox != "bwrap":
        reason = (
            f"{where}.network: only 'sandbox: bwrap' cuts a program off the network; "
            "add it, or drop 'network'"
        )
        raise ConfigError("spec.shape", path=display, reason=reason)
    isolation: dict[str, Any] = {"sandbox": raw.sandbox}
    if raw.network:
        isolation["network"] = True
    return isolation


TARGET_PROTOCOLS = ("jsonl",)
MAX_WORKERS = 64


def _persistence(raw: RawTarget, where: str, display: str) -> dict[str, Any]:
    """A program's ``protocol`` and ``workers`` as the frozen spec holds them (left out
    when not declared, so older specs keep their digests)."""
    if raw.protocol is None and raw.workers is None:
        return {}
    _only_a_program(raw, f"{where}.protocol", "takes a protocol", display)
    if raw.protocol is None:
        reason = f"{where}.workers: only 'protocol: jsonl' keeps a pool; add it, or drop 'workers'"
        raise ConfigError("spec.shape", path=display, reason=reason)
    if raw.protocol not in TARGET_PROTOCOLS:
        reason = (
            f"{where}.protocol: unknown protocol {raw.protocol!r}; a program target takes "
            "'jsonl' (one long-lived process), or no 'protocol' (a process per call)"
        )
        raise ConfigError("spec.shape", path=display, reason=reason)
    workers = 1 if raw.workers is None else raw.workers
    if not 1 <= workers <= MAX_WORKERS:
        reason = f"{where}.workers: a whole number of processes from 1 to {MAX_WORKERS}"
        raise ConfigError("spec.shape", path=display, reason=reason)
    return {"protocol": raw.protocol, "workers": workers}


def _check_no_file_beside(root: Path, argv: list[str], where: str, display: str) -> None:
    """Refuse an argv naming a file in the spec's folder by a relative path: the program
    runs in an empty scratch folder, where that path would find nothing (or another file)."""
    for part in argv:
        if not part.startswith("-") and not os.path.isabs(part) and _is_file(root / part):
            reason = (
                f"{where}.argv: {part!r} is a file beside the spec, but a program runs in an "
                "empty scratch folder; name it with 'script' (pinned and copied) or by an "
                "absolute path"
            )
            raise ConfigError("spec.shape", path=display, reason=reason)


def _is_file(path: Path) -> bool:
    """``Path.is_file`` that is False, not an error, for a name too long or not a path."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _environment(
    declared: list[str] | dict[str, str | None] | None, where: str, display: str
) -> dict[str, str | None] | None:
    """A program's allow-list as the frozen spec holds it: name -> value, ``None`` for
    "passed from assay's environment"; nothing declared (or nothing listed) is ``None``,
    so a spec without ``env`` keeps its digest."""
    if not declared:
        return None
    allowed = dict.fromkeys(declared) if isinstance(declared, list) else dict(declared)
    for name, value in allowed.items():
        if not _ENV_NAME.match(name):
            reason = f"{where}: {name!r} is not a variable name (letters, digits, '_')"
            raise ConfigError("spec.shape", path=display, reason=reason)
        if value is not None and "\x00" in value:
            raise ConfigError("spec.shape", path=display, reason=f"{where}.{name}: a NUL byte")
    if isinstance(declared, list) and len(allowed) != len(declared):
        raise ConfigError("spec.shape", path=display, reason=f"{where}: a name is listed twice")
    return allowed


def _module_digest(root: Path, ref: str) -> str | None:
    """Pin a callable's module when it is a file in the spec folder (not an installed one)."""
    module = ref.partition(":")[0].replace(".", "/")
    for candidate in (f"{module}.py", f"{module}/__init__.py"):
        path = root / candidate
        if path.is_file() and path.resolve().is_relative_to(root):
            return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return None
