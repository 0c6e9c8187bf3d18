"""``assay run``'s own options through the real command line: where the run goes by
default, how many trials are in flight (``-j``), and the progress line on a terminal."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from assay.errors import EXIT_FAILED, EXIT_PASSED
from tests.helpers import SHIPPING, events_of, run_cli, run_dirs, simple_spec, unique_callable_spec


@pytest.mark.doc(
    "docs/cli.md",
    "`--output/-o` — run directory to create (default `runs/<evaluation>-<UTC time>`).",
)
def test_without_output_the_run_goes_to_runs_evaluation_and_utc_time(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite")
    ran = run_cli("run", spec, cwd=tmp_path)
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr
    (run,) = run_dirs(tmp_path / "runs")
    assert re.fullmatch(r"simple-\d{8}T\d{6}Z", run.name), run.name
    assert ran.stdout.splitlines()[-1] == f"evidence and reports: {Path('runs') / run.name}"
    assert run_cli("verify", run).returncode == EXIT_PASSED


# Each call says how many calls are in flight as it starts, and waits until the limit it
# is told is reached (or a few seconds pass), so a run that allows that many reaches it.
IN_FLIGHT = """
import asyncio
import os

import assay

state = {"now": 0}
full = []


async def answer(text):
    if not full:
        full.append(asyncio.Event())
    state["now"] += 1
    assay.record_event("extra", {"in_flight": state["now"]})
    if state["now"] >= int(os.environ["EXPECTED_IN_FLIGHT"]):
        full[0].set()
    try:
        await asyncio.wait_for(full[0].wait(), 5)
    except TimeoutError:
        pass
    state["now"] -= 1
    return text
"""


@pytest.mark.doc("docs/cli.md", "`--max-concurrency/-j` — trials in flight at once (default 16).")
@pytest.mark.parametrize(
    ("option", "expected"), [((), 16), (("-j", "3"), 3), (("--max-concurrency", "5"), 5)]
)
def test_max_concurrency_is_how_many_trials_are_in_flight(
    tmp_path: Path, option: tuple[str, ...], expected: int
) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(40)]
    spec = unique_callable_spec(tmp_path / "suite", IN_FLIGHT, samples=samples)
    run = tmp_path / "run"
    env = {"EXPECTED_IN_FLIGHT": str(expected)}
    ran = run_cli("run", spec, "-o", run, *option, env=env)
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr
    peak = max(e["data"]["in_flight"] for e in events_of(run, "extra"))
    assert peak == expected


def run_on_a_terminal(*args: str | Path) -> tuple[int, str, str]:
    """``assay ARGS`` with stderr on a pseudo-terminal: (exit code, stdout, what the
    terminal received)."""
    master, slave = os.openpty()
    # a terminal 200 columns wide: the whole bar fits (a narrower one cuts its end)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        env={**os.environ, "LANG": "C.UTF-8"},
    )
    os.close(slave)
    stdout, _ = proc.communicate(timeout=120)
    received = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        received.append(chunk)
    os.close(master)
    return proc.returncode, stdout, b"".join(received).decode()


@pytest.mark.doc(
    "docs/cli.md",
    "On a terminal it is a bar drawn by tqdm, redrawn every half second and cut to the "
    "terminal's width",
    "Default: on a terminal only, and not with `--dry-run` (whose events are printed there).",
    "each target's running pass rate (its first scorer's passes over the trials scored so "
    "far), the trials that ended blocked, invalid or in error, the retries (attempts after a "
    "trial's first)",
)
def test_on_a_terminal_the_line_is_on_by_default_but_not_for_a_dry_run(tmp_path: Path) -> None:
    spec = SHIPPING / "eval.yaml"
    code, stdout, terminal = run_on_a_terminal("run", spec, "-o", tmp_path / "run")
    assert code == EXIT_FAILED, stdout + terminal  # the shipping gate fails
    final = terminal.rsplit("\r", 2)[-2]  # the last redraw, before the closing line end
    assert terminal.startswith("\r") and terminal.endswith("\x1b[K\r\n")
    assert final.startswith("shipping-fee: 100%|" + "█" * 20 + "| 6/6, "), terminal
    assert final.endswith(
        ", pass buggy-release 67%, fixed-release 100%, 0 error(s), 0 retry(ies)\x1b[K"
    ), terminal
    assert not re.search(r"(?<![0-9,])0/s", final)  # a rate, never 0/s
    assert terminal.count("\n") == 1 and "\x1b[K" in terminal  # one line, redrawn in place
    assert "trials" not in stdout

    code, stdout, terminal = run_on_a_terminal("run", spec, "--dry-run")
    assert code == EXIT_FAILED
    assert terminal == ""  # the events went to stdout; no progress line beside them
    assert '"type":"run_started"' in stdout

    code, _, terminal = run_on_a_terminal("run", spec, "-o", tmp_path / "quiet", "--no-progress")
    assert code == EXIT_FAILED and terminal == ""
