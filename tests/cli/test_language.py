"""Messages in English by default, in Chinese with --lang zh or a zh_* locale."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import EXIT_CONFIG, EXIT_EVIDENCE
from tests.helpers import error_line, has_cjk, run_cli, run_cli_locale, simple_spec


def _missing_spec(tmp_path: Path, *args: str, env: dict[str, str]) -> str:
    proc = run_cli_locale(*args, "run", tmp_path / "absent.yaml", env=env)
    assert proc.returncode == EXIT_CONFIG
    line = error_line(proc)
    assert "absent.yaml" in line
    return line


@pytest.mark.parametrize(
    ("args", "env"),
    [
        ((), {}),
        ((), {"LANG": "C.UTF-8"}),
        ((), {"LANG": "en_US.UTF-8"}),
        (("--lang", "en"), {"LANG": "zh_CN.UTF-8"}),
        ((), {"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}),
    ],
    ids=["no-locale", "C", "en_US", "flag-beats-LANG", "LC_ALL-beats-LANG"],
)
@pytest.mark.doc(
    "docs/cli.md",
    "`--lang` — message language; default from `LC_ALL`/`LC_MESSAGES`/`LANG` (`zh_*` → Chinese).",
)
def test_english(tmp_path: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    line = _missing_spec(tmp_path, *args, env=env)
    assert not has_cjk(line)
    assert "does not exist" in line


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--lang", "zh"), {"LANG": "C.UTF-8"}),
        (("--lang=zh",), {}),
        ((), {"LANG": "zh_CN.UTF-8"}),
        ((), {"LANG": "zh_TW.UTF-8"}),
        ((), {"LC_ALL": "zh_CN.UTF-8", "LANG": "C.UTF-8"}),
        ((), {"LC_MESSAGES": "zh_CN.UTF-8"}),
    ],
    ids=["flag", "flag-equals", "LANG-zh_CN", "LANG-zh_TW", "LC_ALL", "LC_MESSAGES"],
)
@pytest.mark.doc(
    "docs/cli.md",
    "`--lang` — message language; default from `LC_ALL`/`LC_MESSAGES`/`LANG` (`zh_*` → Chinese).",
)
def test_chinese(tmp_path: Path, args: tuple[str, ...], env: dict[str, str]) -> None:
    line = _missing_spec(tmp_path, *args, env=env)
    assert has_cjk(line)
    assert "不存在" in line


def test_default_is_english_through_run_cli(tmp_path: Path) -> None:
    proc = run_cli("run", tmp_path / "absent.yaml")
    assert not has_cjk(error_line(proc))


def test_chinese_spec_error_names_file_and_field(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path, gate={"minimum": 1.5})
    proc = run_cli("--lang", "zh", "run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    line = error_line(proc)
    assert has_cjk(line)
    assert str(spec) in line and "gate.minimum" in line


def test_chinese_path_error(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path, dataset="../x.jsonl")
    proc = run_cli_locale("run", spec, env={"LANG": "zh_CN.UTF-8"})
    assert proc.returncode == EXIT_CONFIG
    line = error_line(proc)
    assert has_cjk(line) and "../x.jsonl" in line


def test_chinese_not_a_run(tmp_path: Path) -> None:
    proc = run_cli("--lang", "zh", "verify", tmp_path)
    assert proc.returncode == EXIT_EVIDENCE
    assert has_cjk(error_line(proc))


def test_chinese_run_output(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite")
    proc = run_cli("--lang", "zh", "run", spec, "--output", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert has_cjk(proc.stdout)
    assert "门禁" in proc.stdout
    english = run_cli("gate", tmp_path / "run")
    assert english.returncode == 0 and not has_cjk(english.stdout)
    assert "gate: passed" in english.stdout


def test_unknown_language_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("--lang", "fr", "run", tmp_path / "absent.yaml")
    assert proc.returncode == EXIT_CONFIG
    assert "Traceback" not in proc.stderr
    assert "fr" in proc.stderr
