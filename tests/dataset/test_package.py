"""``package_file``: data inside installed packages, found without importing them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.dataset import package_file
from assay.errors import ConfigError


def test_a_file_inside_a_package_is_found_without_running_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "datapkg_for_test"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('needs langchain')\n")
    (package / "data" / "set.jsonl").write_text('{"input": "q"}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    found = package_file("datapkg_for_test", "data/set.jsonl")
    assert found == package / "data" / "set.jsonl"
    assert "datapkg_for_test" not in sys.modules  # never imported


def test_a_missing_package_says_how_to_install_it() -> None:
    with pytest.raises(ConfigError) as caught:
        package_file("no_such_data_package_xyz", "data/x.jsonl", install="no-such-data")
    line = caught.value.one_line()
    assert "'no_such_data_package_xyz'" in line
    assert "pip install --no-deps no-such-data" in line


def test_a_package_without_the_file_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "emptypkg_for_test").mkdir()
    (tmp_path / "emptypkg_for_test" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        package_file("emptypkg_for_test", "data/x.jsonl")
    assert "has no data/x.jsonl" in caught.value.one_line()
    assert str(tmp_path) in caught.value.one_line()
