"""The compiled build's configuration (pyproject's mypyc hook, scripts/compiled.py).

Building it takes minutes and a C compiler, so the suite does not: scripts/check.sh
ends with scripts/check_compiled.sh, which builds it, compares its evidence with the
pure build's and runs the trial path's tests on it. Here: what would make that build
wrong or an editable install stop being pure Python.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _hook() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    hook: dict[str, object] = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["mypyc"]
    return hook


def test_the_hook_is_off_unless_asked_for() -> None:
    """An editable install (and ``pip install .``) stays pure Python: a ``.so`` left
    beside an edited ``.py`` would be imported instead of it."""
    assert _hook()["enable-by-default"] is False


def test_every_compiled_module_is_a_source_file_of_assay() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from compiled import compiled_modules
    finally:
        sys.path.remove(str(REPO / "scripts"))
    names = compiled_modules()
    assert names and len(set(names)) == len(names)
    for name in names:
        assert name.startswith("assay."), name
        assert (REPO / "src" / (name.replace(".", "/") + ".py")).is_file(), name


def test_the_whole_check_ends_with_the_compiled_build() -> None:
    check = (REPO / "scripts" / "check.sh").read_text()
    assert "scripts/check_compiled.sh" in check
    compiled = (REPO / "scripts" / "check_compiled.sh").read_text()
    assert "scripts/compiled.py" in compiled and "same_evidence.py" in compiled
