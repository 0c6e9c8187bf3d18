"""Paths in a spec stay inside its folder: absolute, ``..`` and escaping symlinks are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import EXIT_CONFIG, ConfigError
from assay.spec import load_spec, resolve_inside
from tests.helpers import error_line, run_cli, simple_spec, write_dataset

Setup = Callable[[Path, Path], str]
"""Given (spec folder, outside folder), prepare files and return the path to write."""


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    write_dataset(outside, [{"id": 1, "input": "x", "expected": "x"}], "x.jsonl")
    (outside / "x.py").write_text("print('\"x\"')\n")
    return outside


def _name(field: str) -> str:
    return "x.jsonl" if field == "dataset" else "x.py"


def absolute(folder: Path, outside: Path, field: str) -> str:
    return str(outside / _name(field))


def absolute_inside(folder: Path, outside: Path, field: str) -> str:
    """Even an absolute path that points inside the folder is refused."""
    return str(folder / "data.jsonl")


def home(folder: Path, outside: Path, field: str) -> str:
    return "~/" + _name(field)


def dotdot(folder: Path, outside: Path, field: str) -> str:
    return "../outside/" + _name(field)


def sub_dotdot(folder: Path, outside: Path, field: str) -> str:
    (folder / "sub").mkdir()
    return "sub/../../outside/" + _name(field)


def backslash_dotdot(folder: Path, outside: Path, field: str) -> str:
    return "..\\outside\\" + _name(field)


def file_symlink(folder: Path, outside: Path, field: str) -> str:
    (folder / "link").symlink_to(outside / _name(field))
    return "link"


def dir_symlink(folder: Path, outside: Path, field: str) -> str:
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    return "linked/" + _name(field)


def chained_symlink(folder: Path, outside: Path, field: str) -> str:
    """A link to a link inside the folder that itself leaves it."""
    (folder / "hop").symlink_to(outside / _name(field))
    (folder / "link").symlink_to(folder / "hop")
    return "link"


def directory(folder: Path, outside: Path, field: str) -> str:
    (folder / "adir").mkdir()
    return "adir"


def missing(folder: Path, outside: Path, field: str) -> str:
    return "nope/" + _name(field)


def dangling(folder: Path, outside: Path, field: str) -> str:
    (folder / "link").symlink_to(folder / "gone")
    return "link"


CASES = [
    (absolute, "spec.path_absolute"),
    (absolute_inside, "spec.path_absolute"),
    (home, "spec.path_absolute"),
    (dotdot, "spec.path_escape"),
    (sub_dotdot, "spec.path_escape"),
    (backslash_dotdot, "spec.path_escape"),
    (file_symlink, "spec.path_symlink"),
    (dir_symlink, "spec.path_symlink"),
    (chained_symlink, "spec.path_symlink"),
    (directory, "spec.path_not_file"),
    (missing, "spec.path_missing"),
    (dangling, "spec.path_missing"),
]


def _spec_with(folder: Path, field: str, value: str) -> Path:
    if field == "dataset":
        return simple_spec(folder, dataset=value)
    return simple_spec(folder, targets=[{"id": "prog", "script": value}])


@pytest.mark.parametrize("field", ["dataset", "script"])
@pytest.mark.parametrize(("setup", "key"), CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.doc(
    "docs/spec.md",
    "Every path is relative to the spec's folder and must stay inside it: absolute paths, "
    "`..` and symbolic links that lead outside are refused before anything is read.",
)
def test_path_is_refused(
    tmp_path: Path, field: str, setup: Callable[[Path, Path, str], str], key: str
) -> None:
    outside = _outside(tmp_path)
    folder = tmp_path / "suite"
    folder.mkdir()
    value = setup(folder, outside, field)
    path = _spec_with(folder, field, value)
    where = "dataset" if field == "dataset" else "targets[0].script"

    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == key
    assert info.value.params["field"] == where
    assert info.value.params["value"] == value

    out = tmp_path / "run"
    proc = run_cli("run", path, "--output", out)
    assert proc.returncode == EXIT_CONFIG, proc.stderr
    line = error_line(proc)
    assert where in line and value in line
    assert proc.stdout == ""
    assert not out.exists()


@pytest.mark.doc(
    "docs/spec.md",
    "Every path is relative to the spec's folder and must stay inside it",
)
def test_paths_inside_the_folder_are_accepted(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    (folder / "data").mkdir(parents=True)
    write_dataset(folder / "data", [{"id": 1, "input": "x", "expected": "x"}], "set.jsonl")
    (folder / "bin").mkdir()
    (folder / "bin" / "answer.py").write_text("print('\"x\"')\n")
    (folder / "alias.jsonl").symlink_to(folder / "data" / "set.jsonl")
    (folder / "tools").symlink_to(folder / "bin", target_is_directory=True)
    for dataset in ("data/set.jsonl", "./data/set.jsonl", "alias.jsonl"):
        for script in ("bin/answer.py", "tools/answer.py"):
            path = simple_spec(folder, dataset=dataset, targets=[{"id": "prog", "script": script}])
            spec = load_spec(path).spec
            assert spec.dataset.samples == 1
            assert spec.target("prog").script == script


def test_dotdot_is_refused_even_when_it_stays_inside(tmp_path: Path) -> None:
    """The rule is simple on purpose: no '..' at all."""
    folder = tmp_path / "suite"
    (folder / "sub").mkdir(parents=True)
    path = simple_spec(folder, dataset="sub/../data.jsonl")
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.path_escape"


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("/etc/passwd", "spec.path_absolute"),
        ("C:\\data.jsonl", "spec.path_absolute"),
        ("c:data.jsonl", "spec.path_absolute"),
        ("", "spec.path_missing"),
        ("  ", "spec.path_missing"),
        ("..", "spec.path_escape"),
        ("a/../../b", "spec.path_escape"),
        ("a\\..\\..\\b", "spec.path_escape"),
    ],
)
def test_resolve_inside_refuses(tmp_path: Path, value: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_inside(tmp_path, value, "somefield")
    assert info.value.key == key
    assert "somefield" in info.value.one_line()


def test_resolve_inside_returns_the_real_path(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert resolve_inside(tmp_path, "link.txt", "f") == (tmp_path / "real.txt").resolve()


def _shell_script(folder: Path, name: str) -> Path:
    script = folder / name
    script.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"ok\": true}'\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("name", ["answer.sh", "date", "sub/answer"])
def test_executable_script_runs_from_the_spec_folder(tmp_path: Path, name: str) -> None:
    """A bare name must not be looked up on PATH: 'date' is the pinned file, not /bin/date."""
    folder = tmp_path / "suite"
    (folder / "sub").mkdir(parents=True)
    _shell_script(folder, name)
    path = simple_spec(
        folder,
        samples=[{"id": 1, "input": "x", "expected": {"ok": True}}],
        targets=[{"id": "sh", "script": name}],
        scorers=[{"type": "field_match", "field": "ok"}],
        retry={"max_attempts": 1},
    )
    argv = load_spec(path).spec.target("sh").argv
    assert "/" in argv[0] and argv[0].endswith(name)
    proc = run_cli("run", path, "--output", tmp_path / "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
