"""The core install: a fresh venv holding assay and only the distributions its core
``dependencies`` need (resolved through their own metadata, never the extras), where the
shipping example still runs, ``python -m assay`` works, and what moved to an extra (the
OpenAI SDK, aiohttp) is one line naming ``pip install 'assay[...]'``.

The venv is made offline and in seconds: ``python -m venv --without-pip``, then each
needed distribution of this interpreter's environment is linked into its site-packages
(its files and its ``.dist-info``, as pip lays them out) and assay's ``src`` is put on
its path by a ``.pth`` file, which is what ``pip install -e .`` does. A core dependency
missing from pyproject is then missing in the venv, and the example fails.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.helpers import REPO

SHIPPING = REPO / "examples" / "shipping" / "eval.yaml"


def core_distributions() -> set[str]:
    """The distributions the core needs: pyproject's ``dependencies`` and, transitively,
    what each of them requires without extras (markers evaluated for this machine)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    todo = [Requirement(line) for line in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        todo += [Requirement(r) for r in importlib.metadata.requires(name) or []]
    return seen


def link_distribution(name: str, site: Path) -> None:
    """Link every top-level entry of distribution *name* into *site*."""
    dist = importlib.metadata.distribution(name)
    base = Path(str(dist.locate_file("")))
    tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
    for top in tops:
        target = site / top
        if not target.exists():
            target.symlink_to(base / top)


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("core") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    for name in core_distributions():
        link_distribution(name, site)
    (site / "assay-editable.pth").write_text(f"{(REPO / 'src').resolve()}\n")
    return venv / "bin" / "python"


def in_venv(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "LANG": "C.UTF-8"},
        timeout=120,
        check=False,
    )


def test_the_core_has_neither_the_openai_sdk_nor_aiohttp(core_venv: Path) -> None:
    core = core_distributions()
    assert {"openai", "aiohttp"}.isdisjoint(core)
    assert {"msgspec", "click", "python-dotenv"} <= core
    probe = (
        "import importlib.util as u;"
        "print([bool(u.find_spec(m)) for m in ('openai', 'aiohttp', 'assay', 'dotenv')])"
    )
    assert in_venv(core_venv, "-c", probe).stdout.strip() == "[False, False, True, True]"


@pytest.mark.doc(
    "docs/cli.md",
    "the core install (`pip install assay`) runs YAML specs and Python tasks on the"
    " `mock` provider",
)
def test_the_shipping_example_runs_on_the_core_install(core_venv: Path, tmp_path: Path) -> None:
    shutil.copytree(SHIPPING.parent, tmp_path / "shipping")
    proc = in_venv(core_venv, "-m", "assay", "run", "shipping/eval.yaml", "-o", "run", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # documented: buggy-release fails the gate
    assert "fixed-release        passed" in proc.stdout
    assert in_venv(core_venv, "-m", "assay", "verify", "run", cwd=tmp_path).returncode == 0


@pytest.mark.doc(
    "docs/cli.md",
    "the core install (`pip install assay`) runs YAML specs and Python tasks on the"
    " `mock` provider",
)
def test_a_mock_model_task_runs_on_the_core_install(core_venv: Path, tmp_path: Path) -> None:
    tasks = REPO / "examples" / "arithmetic" / "tasks.py"
    proc = in_venv(
        core_venv, "-m", "assay", "run", f"{tasks}@arithmetic", "-T", "count=2", "-o", "run",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "run" / "manifest.json").is_file()


@pytest.mark.doc(
    "docs/cli.md", "Without it, an `openai/` model is one line naming `pip install 'assay[openai]'`"
)
def test_an_openai_model_without_the_extra_is_one_line_naming_it(
    core_venv: Path, tmp_path: Path
) -> None:
    tasks = REPO / "examples" / "arithmetic" / "tasks.py"
    proc = in_venv(
        core_venv, "-m", "assay", "run", f"{tasks}@arithmetic", "--model", "openai/gpt-4o-mini",
        "--model-base-url", "http://127.0.0.1:9/v1", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "assay: model 'openai/gpt-4o-mini' needs the 'openai' package, which is not installed"
        " — install it: pip install 'assay[openai]'"
    ]


@pytest.mark.doc(
    "docs/cli.md", "`assay view` without it is one line naming `pip install 'assay[view]'`"
)
def test_view_without_aiohttp_is_one_line_naming_the_view_extra(
    core_venv: Path, tmp_path: Path
) -> None:
    proc = in_venv(core_venv, "-m", "assay", "view", str(tmp_path), "--no-browser")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "assay: assay view needs the 'aiohttp' package, which is not installed"
        " — install it: pip install 'assay[view]'"
    ]


def extras() -> dict[str, set[str]]:
    """Each extra of pyproject: what it lists, as ``name`` or ``name[extra]``."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found: dict[str, set[str]] = {}
    for extra, lines in project["optional-dependencies"].items():
        found[extra] = set()
        for line in lines:
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            found[extra] |= {name, *(f"{name}[{e}]" for e in requirement.extras)}
    return found


@pytest.mark.doc(
    "docs/cli.md",
    "The OpenAI SDK is the `openai` extra (`pip install 'assay[openai]'`), which `local/`"
    " models need too.",
    "The `local` extra installs all that pip can for the local model",
    "the `test` extra includes every extra.",
)
def test_the_extras_hold_what_the_docs_say() -> None:
    found = extras()
    assert found["openai"] == {"openai", "openai[aiohttp]"}  # aiohttp: the SDK's HTTP client
    assert found["view"] == {"aiohttp"}
    assert {"xllamacpp", "assay[openai]"} <= found["local"]
    others = {f"assay[{extra}]" for extra in found if extra != "test"}
    assert others <= found["test"]
