"""A run folder is a stranger's input: under a name assay writes it may hold a named
pipe (opening it waits for a writer forever) or a link to ``/dev/zero`` (reading it
whole never ends). Every evidence reader opens through ``open_plain``, which refuses
both before reading a byte; the viewer then shows the run as one with a missing file."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from assay.evidence._framed import read_evidence
from assay.evidence._plain import open_plain
from tests.view._support import served, shipping_run


def test_open_plain_refuses_a_pipe_a_device_and_a_folder_before_reading(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe")  # no writer: a plain open() would wait forever
    for name in ("zero", "pipe"):
        with pytest.raises(OSError) as caught:
            open_plain(tmp_path / name)
        assert caught.value.errno == errno.EINVAL
    with pytest.raises(IsADirectoryError):
        open_plain(tmp_path)
    (tmp_path / "plain").write_bytes(b"{}")
    (tmp_path / "link").symlink_to(tmp_path / "plain")  # a link to a regular file is read
    assert read_evidence(tmp_path / "link") == b"{}"


def test_the_run_list_shows_a_run_whose_report_is_a_pipe(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    good = shipping_run(runs)
    hostile = runs / "hostile"
    shutil.copytree(good, hostile)
    (hostile / "report.json").unlink()
    os.mkfifo(hostile / "report.json")  # reading it would hang the request
    with served(runs) as client:
        page = client.get("/")
    assert page.status_code == 200
    assert "hostile" in page.text
    assert "shipping" in page.text
