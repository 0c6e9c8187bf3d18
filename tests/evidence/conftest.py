"""The run every evidence test tampers with: the shipping example, run once for the
package; each test gets its own copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import SHIPPING, run_spec_at


@pytest.fixture(scope="package")
def shipping_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete run of the shipping example (not to be changed: copy it)."""
    folder = tmp_path_factory.mktemp("shipping")
    spec = folder / "spec"
    shutil.copytree(SHIPPING, spec)
    out = folder / "run"
    run_spec_at(spec / "eval.yaml", out)
    return out


@pytest.fixture
def run(shipping_run: Path, tmp_path: Path) -> Path:
    """A copy of the shipping run of this test's own."""
    copy = tmp_path / "run"
    shutil.copytree(shipping_run, copy)
    return copy
