"""Fixtures of the signing tests (``test_signing*.py``): made once per test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import EXIT_PASSED
from tests.cli._signing import keygen, shipping_run
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    keygen(folder / "ci")
    keygen(folder / "other")
    return {"ci": folder / "ci", "other": folder / "other"}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> Path:
    """A shipping run signed afterwards with ``assay sign`` (read-only for the tests)."""
    run = shipping_run(tmp_path_factory.mktemp("signed"), "run")
    proc = run_cli("sign", run, "--key", keys["ci"])
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    return run
