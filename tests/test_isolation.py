"""What a test leaves behind in the process is put back before the next one runs
(tests/_isolation.py, applied to every test by tests/conftest.py), and Hypothesis keeps
its files out of the checkout, drawing the same examples on every CI run."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import storage_directory

from assay import solver
from assay._registry import lookup
from assay.model import get_model, modelapi, set_price
from assay.model._prices import get_price
from assay.model._registry import _providers
from assay.solver import Generate, Solver
from assay.task import load_module
from tests._isolation import ProcessState
from tests.helpers import REPO, write_module


def test_what_a_test_leaks_is_put_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.modules.pop("colorsys", None)  # a library this test imports for the first time
    state = ProcessState.take()
    name = f"leaky_{uuid.uuid4().hex[:12]}"
    folder = tmp_path / "leaky"
    write_module(folder, name, "VALUE = 1\n")
    task_file = write_module(folder, "tasks", "VALUE = 2\n")

    sys.path.insert(0, str(folder))
    importlib.import_module(name)
    task_module = load_module(task_file)
    importlib.import_module("colorsys")
    os.environ["ASSAY_LEAKED"] = "1"
    os.chdir(folder)
    set_price("leaky/model", input=1.0, output=2.0)

    @solver(name="leaky_solver")
    def leaky() -> Solver:
        async def solve(state, generate: Generate):  # type: ignore[no-untyped-def]
            return state

        return solve

    modelapi("leaky")(lambda model_name, config: get_model("mock/echo").api)
    assert lookup("solver", "leaky_solver") is not None and "leaky" in _providers

    state.restore()

    assert str(folder) not in sys.path
    assert name not in sys.modules and task_module.__name__ not in sys.modules
    assert "colorsys" in sys.modules, "a library imported during the test was forgotten"
    assert "ASSAY_LEAKED" not in os.environ
    assert Path.cwd() != folder
    assert get_price("leaky/model") is None
    assert lookup("solver", "leaky_solver") is None
    assert "leaky" not in _providers
    assert lookup("solver", "generate") is not None, "a built-in registration was lost"


def test_a_replaced_registration_gets_its_old_factory_back() -> None:
    get_model("mock/echo")  # the built-in providers are registered
    state = ProcessState.take()
    before = _providers["mock"]
    modelapi("mock")(lambda model_name, config: None)
    state.restore()
    assert _providers["mock"] is before


def test_hypothesis_writes_nothing_into_the_checkout() -> None:
    home = storage_directory("examples", intent_to_write=False).path
    assert REPO not in home.parents, home
    database = settings.default.database
    assert database is None or REPO not in Path(getattr(database, "path", "/")).parents


@pytest.mark.parametrize(("ci", "derandomize"), [("1", True), ("", False)])
def test_under_ci_hypothesis_draws_the_same_examples_and_keeps_none(
    ci: str, derandomize: bool
) -> None:
    code = (
        "import tests.conftest\n"
        "from hypothesis import settings\n"
        "print(settings.default.derandomize, settings.default.database is None)\n"
    )
    env = {**os.environ, "CI": ci}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert proc.stdout.split() == [str(derandomize), str(derandomize)], proc.stderr
