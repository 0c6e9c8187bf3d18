"""tests/_skip_policy.py: under CI a skip fails the run, unless marked ``not_for_ci``.

Each case runs pytest in a subprocess on a small test folder that loads the policy the
way tests/conftest.py does, with and without ``CI`` set.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

TESTS = """
import pytest

def test_runs():
    assert True

def test_skips_inside():
    pytest.skip("chromium is missing")

@pytest.mark.skipif(True, reason="xllamacpp is not installed")
def test_skipped_by_mark():
    pass

@pytest.mark.not_for_ci("needs a GPU")
def test_may_skip():
    pytest.skip("no GPU here")

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_failure():
    assert False
"""

MODULE_SKIP = """
import pytest

pytest.importorskip("no_such_package_anywhere")

def test_never_collected():
    pass
"""


def run_pytest(folder: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text('pytest_plugins = ["tests._skip_policy"]\n')
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:randomly", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-o", "markers=not_for_ci", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "test_sample.py").write_text(textwrap.dedent(TESTS))
    return tmp_path


def test_under_ci_every_skip_not_marked_fails(folder: Path) -> None:
    done = run_pytest(folder, ci=True)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "FAILED test_sample.py::test_skips_inside" in out, out
    assert "ERROR test_sample.py::test_skipped_by_mark" in out, out  # skipped in setup
    assert "skipped under CI, where nothing may skip: chromium is missing" in out, out
    assert "xllamacpp is not installed" in out, out
    assert "SKIPPED [1] test_sample.py" in out and "no GPU here" in out, out
    assert "XFAIL test_sample.py::test_expected_failure" in out, out
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error" in out, out


def test_off_ci_skips_stay_skips(folder: Path) -> None:
    done = run_pytest(folder, ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 3 skipped, 1 xfailed" in done.stdout, done.stdout


def test_under_ci_a_module_skipped_at_import_fails(tmp_path: Path) -> None:
    (tmp_path / "test_module.py").write_text(textwrap.dedent(MODULE_SKIP))
    done = run_pytest(tmp_path, ci=True)
    assert done.returncode == 2, done.stdout + done.stderr  # pytest: collection errors
    assert "ERROR test_module.py - skipped under CI" in done.stdout, done.stdout
    assert "no_such_package_anywhere" in done.stdout, done.stdout
    assert run_pytest(tmp_path, ci=False).returncode == 5  # pytest: no tests ran
