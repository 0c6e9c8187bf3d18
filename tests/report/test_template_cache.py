"""The compiled report template is cached, safely, and a cache never fails a report.

Compiling report.html.j2 cost 0.1-0.3 s of every run (issue 13: a small run pays for
nothing it need not). Jinja keeps compiled templates in a per-user folder under the temp
directory (``TMPDIR`` here, so each test has its own) that it makes with mode 0700 and
refuses when it is not a folder of this user's that only they can use.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.helpers import SHIPPING, run_cli

_RENDER = """
import sys
import msgspec
from assay.report import Report, to_html
report = msgspec.json.decode(open(sys.argv[1], "rb").read(), type=Report)
sys.stdout.write(to_html(report))
"""


def _cache_folder(temp: Path) -> Path:
    return temp / f"_jinja2-cache-{os.getuid()}"


def _render(report_json: Path, temp: Path) -> str:
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.run(
        [sys.executable, "-c", _RENDER, str(report_json)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    return proc.stdout


def test_a_run_leaves_the_compiled_template_in_a_private_folder(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", tmp_path / "run", env={"TMPDIR": str(temp)})
    assert proc.returncode == 1, proc.stderr  # the example's buggy release fails its gate
    folder = _cache_folder(temp)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(list(folder.glob("__jinja2_*.cache"))) == 1


def test_a_cached_template_renders_the_same_page_as_a_fresh_compile(tmp_path: Path) -> None:
    assert run_cli("run", SHIPPING / "eval.yaml", "-o", tmp_path / "run").returncode == 1
    report = tmp_path / "run" / "report.json"
    cached, fresh = tmp_path / "cached", tmp_path / "fresh"
    cached.mkdir()
    fresh.mkdir()
    first = _render(report, cached)  # compiles and stores
    [entry] = _cache_folder(cached).glob("__jinja2_*.cache")
    stored = entry.stat().st_mtime_ns
    assert _render(report, cached) == first  # read back from the cache, not rewritten
    assert entry.stat().st_mtime_ns == stored
    _cache_folder(fresh).write_bytes(b"")  # not a folder: jinja refuses it, so no cache
    assert _render(report, fresh) == first
    assert _cache_folder(fresh).read_bytes() == b""
    assert "<svg" in first and "fee-matches" in first
