"""``./.env``: the variables a project keeps beside its evals (keys, server URLs).

Read once as the CLI starts, from the current folder only (never a parent: a file
found by walking up could belong to another project), with python-dotenv. A variable
already set in the environment wins: ``.env`` only fills in what is missing, so a CI
secret or a one-off ``OPENAI_API_KEY=... assay run`` is never overridden. The values
go into this process's environment and nowhere else: assay records no environment
variable in a run's evidence. ``assay --no-env-file`` skips the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.errors import ConfigError

ENV_FILE = ".env"


def load_env_file(folder: Path | None = None) -> list[str]:
    """Set the variables of ``.env`` in *folder* (default: the current one) that are
    not set yet; the names set. No file, nothing to do (and nothing imported)."""
    path = (folder or Path.cwd()) / ENV_FILE
    if not path.is_file():
        return []
    from dotenv import dotenv_values  # only when there is a file: keeps `assay` fast

    try:
        values = dotenv_values(path, interpolate=True)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("env_file.unreadable", path=str(path), reason=str(exc)) from None
    added = [k for k, v in values.items() if v is not None and k not in os.environ]
    for name in added:
        os.environ[name] = str(values[name])
    return added
