"""Build assay's compiled wheel (pyproject's mypyc hook) and unpack it into a folder.

    python scripts/compiled.py DIR

Leaves ``DIR/site``, a folder to put first on ``PYTHONPATH``: assay with the modules that
``[tool.hatch.build.targets.wheel.hooks.mypyc]`` lists compiled, each checked to import
as an extension module from there; prints its path. The wheel is built from a copy of
the sources in ``DIR``, never in this checkout: the hook leaves its ``.so`` files beside
the ``.py`` files it compiled, where an editable install would import them in place of
the code being edited. ``scripts/check_compiled.sh`` runs tests on it; ``bench/compiled.py``
times it. Needs a C compiler and the package index (the hook installs mypy and assay's
dependencies in the build's own environment); about two minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def compiled_modules() -> list[str]:
    """The dotted names of the modules the hook compiles (its ``include`` list)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    hook = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["mypyc"]
    paths: list[str] = hook["include"]
    return [p.removeprefix("/src/").removesuffix(".py").replace("/", ".") for p in paths]


def build(folder: Path) -> Path:
    """The compiled wheel of this checkout's sources, unpacked in ``folder/site``."""
    source = folder / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    shutil.copytree(REPO / "src", source / "src", ignore=ignore)
    dist = folder / "dist"
    env = {**os.environ, "HATCH_BUILD_HOOK_ENABLE_MYPYC": "true"}
    wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist)]
    subprocess.run([*wheel, str(source)], check=True, env=env)
    (built,) = dist.glob("assay-*.whl")
    site = folder / "site"
    with zipfile.ZipFile(built) as archive:
        archive.extractall(site)
    return site


CHECK = """
import importlib, sys
for name in sys.argv[1:]:
    path = importlib.import_module(name).__file__ or ""
    if not path.endswith(".so"):
        sys.exit(f"{name} is not compiled in this build: {path}")
"""


def check(site: Path) -> None:
    """Stop unless every listed module imports as an extension module from *site*."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    subprocess.run([sys.executable, "-c", CHECK, *compiled_modules()], check=True, env=env)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    site = build(Path(sys.argv[1]))
    check(site)
    print(site)


if __name__ == "__main__":
    main()
