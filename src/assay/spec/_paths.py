"""Resolve a path written in a spec, refusing anything that leaves the spec's folder.

A spec may be handed over by someone else (a pull request, a shared folder). Reading a
file outside its folder, by an absolute path, a ``..`` or a symlink, would let a spec pull
in data it does not own, so all three are refused before anything is read.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from assay.errors import ConfigError


def check_relative(value: str, field: str) -> None:
    """Refuse an empty, absolute or escaping (``..``) path before anything is resolved."""
    if not value.strip():
        raise ConfigError("spec.path_missing", field=field, value=repr(value))
    if os.path.isabs(value) or value.startswith("~") or _has_drive(value):
        raise ConfigError("spec.path_absolute", field=field, value=value)
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        raise ConfigError("spec.path_escape", field=field, value=value)
    if "\x00" in value:
        raise ConfigError("spec.path_missing", field=field, value=repr(value))


def resolve_folder_inside(root: Path, value: str, field: str) -> Path:
    """The real path of *value* under *root*, which may not exist (yet): a run folder.

    The same rules as files: no absolute path, no ``..``, no symlink leading outside.
    """
    check_relative(value, field)
    root_real = root.resolve()
    try:
        real = (root_real / value).resolve()
    except (RuntimeError, OSError):  # a symlink loop
        raise ConfigError("spec.path_symlink", field=field, value=value) from None
    if not real.is_relative_to(root_real):
        raise ConfigError("spec.path_symlink", field=field, value=value)
    return real


def resolve_inside(root: Path, value: str, field: str) -> Path:
    """Return the real path of *value* under *root*, or raise a ConfigError naming *field*."""
    real = resolve_folder_inside(root, value, field)
    if not real.exists():
        raise ConfigError("spec.path_missing", field=field, value=value)
    if not real.is_file():
        raise ConfigError("spec.path_not_file", field=field, value=value)
    return real


def _has_drive(value: str) -> bool:
    """True for Windows-style ``C:\\...`` paths, which are absolute there too."""
    return len(value) > 1 and value[1] == ":" and value[0].isalpha()
