"""Each package's ``__all__`` names exactly its public members (as httpx checks its own)."""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = [
    "assay",
    "assay.spec",
    "assay.dataset",
    "assay.plan",
    "assay.model",
    "assay.solver",
    "assay.target",
    "assay.run",
    "assay.evidence",
    "assay.score",
    "assay.scorer",
    "assay.util",
    "assay.compare",
    "assay.gate",
    "assay.report",
    "assay.pipeline",
    "assay.cli",
    "assay.sandbox",
    "assay.agent",
    "assay.tool",
    "assay.log",
]

# Dunder names a package may export on purpose.
EXPORTED_PRIVATE = {"__version__"}


def _public_members(module: types.ModuleType) -> set[str]:
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") and name not in EXPORTED_PRIVATE:
            continue
        if isinstance(value, types.ModuleType) and value.__name__.startswith(module.__name__ + "."):
            continue  # a submodule, bound by importing it
        names.add(name)
    return names


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_members(name: str) -> None:
    # Import every package first, so submodules bound on their parents are present too.
    for other in PACKAGES:
        importlib.import_module(other)
    module = importlib.import_module(name)
    exported = module.__all__
    for member in exported:
        getattr(module, member)  # a lazily exported name is bound once it is used
    assert len(exported) == len(set(exported)), "a name is listed twice"
    assert set(exported) == _public_members(module)


@pytest.mark.parametrize("name", PACKAGES)
def test_star_import_gives_the_same_names(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(importlib.import_module(name).__all__)


def test_packages_are_packages() -> None:
    for name in PACKAGES:
        assert hasattr(importlib.import_module(name), "__path__"), name


def test_import_assay_loads_no_pipeline_until_a_name_is_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, assay; before = 'assay.pipeline' in sys.modules; "
        "assay.eval; import assay.task, assay.solver, assay.tool; "
        "print(before, 'assay.pipeline' in sys.modules, assay.task.__module__, "
        "assay.solver.__module__, assay.tool.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the decorators stay the decorators once their subpackages are imported
    assert out.stdout.split() == [
        "False",
        "True",
        "assay.task._task",
        "assay.solver._solver",
        "assay.solver._tools",
    ]
