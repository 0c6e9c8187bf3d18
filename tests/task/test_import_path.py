"""A task file, or a callable target's module, has its folder on ``sys.path`` while it
loads (so it can import the modules beside it) and never afterwards: a ``numbers.py``
in that folder must not shadow the standard ``numbers`` for the rest of the process or
for the processes it starts."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from assay.target import load_callable
from assay.task import load_tasks
from tests.helpers import write_module

SHADOW = "raise ImportError('a numbers.py beside a task file shadowed the standard module')\n"


def sibling_name() -> str:
    """A module name no other test uses (Python keeps imported modules by name)."""
    return f"sibling_{uuid.uuid4().hex[:12]}"


def folder_with_shadow(tmp_path: Path) -> Path:
    """A folder holding a ``numbers.py`` that fails when imported."""
    folder = tmp_path / "user_code"
    write_module(folder, "numbers", SHADOW)
    return folder


def numbers_imports_in_a_child() -> subprocess.CompletedProcess[str]:
    """``import numbers`` in a fresh interpreter given this process's ``sys.path``, as
    a worker process inheriting it would be."""
    env_path = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run(
        [sys.executable, "-c", "import numbers; print(numbers.Number.__module__)"],
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def assert_folder_left_the_path(folder: Path) -> None:
    """*folder* is off ``sys.path``, so a process given that path gets the real ``numbers``."""
    assert str(folder) not in sys.path
    child = numbers_imports_in_a_child()
    assert (child.returncode, child.stdout.strip()) == (0, "numbers"), child.stderr


def test_a_task_file_imports_its_siblings_but_leaves_its_folder_off_sys_path(
    tmp_path: Path,
) -> None:
    folder = folder_with_shadow(tmp_path)
    helper = sibling_name()
    write_module(folder, helper, "PROMPT = 'What is 2 + 2?'\n")
    source = f"""
from assay import Sample, Task, task
from {helper} import PROMPT


@task
def quiz() -> Task:
    return Task(dataset=[Sample(input=PROMPT, target="4")])
"""
    tasks = write_module(folder, "tasks", source)
    ((made, record),) = load_tasks(f"{tasks}@quiz")
    assert [s.input for s in made.dataset] == ["What is 2 + 2?"]
    assert record["name"] == "quiz"
    assert_folder_left_the_path(folder)


@pytest.mark.doc(
    "docs/spec.md",
    "The spec's folder is on `sys.path` only while the module loads: the module can import "
    "the modules beside it at its top, but one it imports only inside the function, when "
    "called, is not found there.",
)
def test_a_callable_module_imports_its_siblings_but_leaves_its_folder_off_sys_path(
    tmp_path: Path,
) -> None:
    folder = folder_with_shadow(tmp_path)
    helper = sibling_name()
    write_module(folder, helper, "def shout(text):\n    return text.upper()\n")
    write_module(
        folder,
        "target_mod",
        f"from {helper} import shout\n\n\ndef answer(text):\n    return shout(text)\n",
    )
    answer = load_callable("target_mod:answer", folder, "t")
    assert answer("hi") == "HI"
    assert_folder_left_the_path(folder)


@pytest.mark.doc(
    "docs/spec.md",
    "The spec's folder is on `sys.path` only while the module loads: the module can import "
    "the modules beside it at its top, but one it imports only inside the function, when "
    "called, is not found there.",
)
def test_a_sibling_imported_only_at_call_time_is_not_found(tmp_path: Path) -> None:
    """The documented price of keeping the folder off ``sys.path``: import at the top."""
    folder = tmp_path / "user_code"
    helper = sibling_name()
    write_module(folder, helper, "VALUE = 1\n")
    write_module(folder, "late_mod", f"def answer(text):\n    import {helper}\n    return text\n")
    answer = load_callable("late_mod:answer", folder, "t")
    with pytest.raises(ModuleNotFoundError, match=helper):
        answer("hi")
