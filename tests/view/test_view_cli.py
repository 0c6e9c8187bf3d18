"""``assay view`` as a command: the real CLI in a subprocess, its URL read from its output.

It binds 127.0.0.1 by default and prints the URL (``--port 0``: a free port); DIR defaults
to ``runs``; a folder that is not there or a port that is taken is one line and exit 2;
Ctrl-C ends it with 130, as any command. And a run still going is listed as running,
with how many of its trials have finished, then as complete once it is sealed.
"""

from __future__ import annotations

import re
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import error_line, run_cli, start_cli, wait_for, write_dataset, write_spec
from tests.view._support import served, shipping_run

URL_LINE = "assay view: serving on "
REFRESH = '<meta http-equiv="refresh" content="5">'


@contextmanager
def viewer(*args: str | Path, cwd: Path | None = None, port: int | None = 0) -> Iterator[str]:
    """``assay view ARGS --no-browser`` (on ``--port 0`` unless *port* is None) started;
    yields the URL it printed, then stops it with Ctrl-C and checks it exited 130."""
    ports = [] if port is None else ["--port", str(port)]
    proc = start_cli("view", *args, *ports, "--no-browser", cwd=cwd)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the server's own evidence that it listens
        assert line.startswith(URL_LINE), line + proc.stderr.read() if proc.stderr else line
        yield line[len(URL_LINE) :].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        proc.stdout and proc.stdout.close()
        proc.stderr and proc.stderr.close()
    assert code == 130


@pytest.mark.doc(
    "docs/cli.md",
    "| 130 | interrupted |",
    "| `view [DIR] [--host H] [--port P] [--no-browser]` | a local web viewer over the runs "
    "under `DIR` (default `runs`, or one run's folder) on 127.0.0.1 port 7575 (`--port 0`: "
    "any free port); prints its URL and opens it unless `--no-browser`; Ctrl-C stops it",
)
def test_view_binds_localhost_and_prints_its_url(tmp_path: Path) -> None:
    shipping_run(tmp_path / "runs")
    with viewer(tmp_path / "runs") as url:
        assert url.startswith("http://127.0.0.1:")
        page = httpx.get(url, timeout=60)
    assert page.status_code == 200 and 'data-run="shipping"' in page.text


@pytest.mark.doc("docs/cli.md", "(default `runs`, or one run's folder) on 127.0.0.1 port 7575")
def test_view_lists_the_runs_folder_by_default_on_port_7575(tmp_path: Path) -> None:
    shipping_run(tmp_path / "runs")
    with viewer(cwd=tmp_path, port=None) as url:
        assert url == "http://127.0.0.1:7575/"
        page = httpx.get(url, timeout=60)
    assert 'data-run="shipping"' in page.text


@pytest.mark.doc("docs/cli.md", "a local web viewer over the runs under `DIR` (default `runs`,")
def test_view_of_one_run_folder_lists_that_run(tmp_path: Path) -> None:
    run = shipping_run(tmp_path / "runs")
    with viewer(run) as url:
        run_page = httpx.get(url + "runs/shipping/", timeout=60)
    assert run_page.status_code == 200 and 'id="gate-status">failed<' in run_page.text


@pytest.mark.doc("docs/cli.md", "| 2 | usage or configuration error: nothing was run |")
def test_view_of_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli("view", tmp_path / "nowhere", "--no-browser")
    assert proc.returncode == 2
    assert error_line(proc) == (
        f"assay: {tmp_path / 'nowhere'} is not a folder of runs — give the folder assay run "
        "wrote to (default: runs) or one run's folder"
    )


def test_view_on_a_taken_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_cli("view", tmp_path, "--port", port, "--no-browser")
    assert proc.returncode == 2
    line = error_line(proc)
    assert line.startswith(f"assay: cannot listen on 127.0.0.1 port {port}: "), line
    assert "Traceback" not in proc.stderr


SLOW_TARGET = """
import time
from pathlib import Path

def answer(text):
    if text == "last":  # waits until the test lets it go
        Path({waiting!r}).touch()
        while not Path({go!r}).exists():
            time.sleep(0.01)
    return text
"""


def test_a_run_going_on_is_listed_as_running_then_complete(tmp_path: Path) -> None:
    go, waiting = tmp_path / "go", tmp_path / "waiting"
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "slow.py").write_text(SLOW_TARGET.format(go=str(go), waiting=str(waiting)))
    samples = [{"id": s, "input": s, "expected": s} for s in ("a", "b", "c", "last")]
    write_dataset(folder, samples)
    spec = write_spec(
        folder,
        {
            "evaluation": "slow",
            "dataset": "data.jsonl",
            "targets": [{"id": "slow", "callable": "slow:answer", "timeout": 600}],
            "scorers": [{"id": "exact", "type": "exact"}],
        },
    )
    run = start_cli("run", spec, "-o", tmp_path / "runs" / "slow")
    try:
        with served(tmp_path / "runs") as client:

            def row() -> str:
                page = client.get("/").text
                return page.split('data-run="slow"')[1].split("</tr>")[0] if "slow" in page else ""

            # the three quick trials are written while the last one waits
            three = 'class="trials">3 / 4<'
            assert wait_for(lambda: waiting.exists() and three in row(), 120, step=0.05)
            assert 'class="badge running status"' in row()
            assert REFRESH in client.get("/").text  # the list follows the run by itself
            run_page = client.get("/runs/slow/").text
            assert 'id="run-status">running<' in run_page and REFRESH in run_page
            going = client.get("/runs/slow/trials").text
            assert going.count('class="badge completed"') == 3
            assert going.count('class="badge pending"') == 1  # listed, not linked: no evidence
            assert len(re.findall(r'class="trial-link', going)) == 3
            go.touch()
            assert run.wait(timeout=120) == 0
            done = row()
            assert 'class="badge complete status"' in done and 'class="trials">4<' in done
            assert REFRESH not in client.get("/").text
    finally:
        go.touch()
        if run.poll() is None:
            run.kill()
        run.wait(timeout=60)
        for stream in (run.stdout, run.stderr):
            if stream is not None:
                stream.close()


def test_view_help_names_its_options() -> None:
    proc = run_cli("view", "--help")
    assert proc.returncode == 0
    for option in ("--host", "--port", "--no-browser"):
        assert option in proc.stdout
