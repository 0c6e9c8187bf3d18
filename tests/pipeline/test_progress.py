"""Progress reports: every half second while a run goes on, and one final report at its
end; the CLI's line on stderr (``--progress``), silent by default off a terminal."""

from __future__ import annotations

import io
import shutil
import signal
from pathlib import Path

import pytest

from assay.cli._progress import progress_line, render
from assay.pipeline import Progress
from tests.helpers import REPO, run_cli, run_spec_at, unique_callable_spec

SLOW = """
import time


def answer(text):
    time.sleep(0.05)
    return text
"""
SAMPLES = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(30)]


# The last sample answers only once a report came mid-run (the test's progress callback
# leaves the marker): a run that reported only at its end would fail that trial.
WAITS_FOR_A_REPORT = """
import os
import time


def answer(text):
    if text == "q29":
        deadline = time.monotonic() + 30  # a failure guard, not a measurement
        while not os.path.exists(%r):
            if time.monotonic() > deadline:
                raise RuntimeError("no progress report came while the run went on")
            time.sleep(0.01)
    return text
"""


@pytest.mark.doc("docs/cli.md", "On a terminal it is one line redrawn every half second.")
def test_a_run_reports_as_it_goes_and_once_at_the_end(tmp_path: Path) -> None:
    seen = tmp_path / "seen-mid-run"
    source = WAITS_FOR_A_REPORT % str(seen)
    spec = unique_callable_spec(tmp_path / "spec", source, samples=SAMPLES)
    reports: list[Progress] = []

    def report(progress: Progress) -> None:
        reports.append(progress)
        if 0 < progress.done < len(SAMPLES):
            seen.touch()

    outcome = run_spec_at(spec, tmp_path / "run", max_concurrency=2, progress=report)
    assert outcome.gate.status == "passed"  # the last trial saw a mid-run report
    assert [r.final for r in reports].count(True) == 1 and reports[-1].final
    assert reports[-1].done == reports[-1].planned == len(SAMPLES)
    assert any(0 < r.done < len(SAMPLES) for r in reports[:-1])  # seen mid-run
    assert [r.done for r in reports] == sorted(r.done for r in reports)
    assert {r.evaluation for r in reports} == {"simple"}


def test_a_python_task_reports_each_unit(tmp_path: Path) -> None:
    from assay import eval as run_eval

    reports: list[Progress] = []
    task = REPO / "examples" / "arithmetic" / "tasks.py"
    (result,) = run_eval(
        f"{task}@arithmetic",
        task_args={"count": 5, "epochs": 1},
        log_dir=tmp_path / "runs",
        progress=reports.append,
    )
    assert result.status == "success", result.error
    assert reports[-1].final and reports[-1].done == reports[-1].planned == 5


@pytest.mark.doc(
    "docs/cli.md",
    "`--progress/--no-progress` (`run` and `resume`) — how many trials are done, on stderr: "
    "`eval: 1,234/10,000 trials (12%), 412/s, about 0:21 left`.",
)
def test_the_cli_line_is_on_stderr_when_asked_and_silent_by_default(tmp_path: Path) -> None:
    spec = unique_callable_spec(tmp_path / "spec", SLOW, samples=SAMPLES)
    asked = run_cli("run", spec, "-o", tmp_path / "asked", "-j", "2", "--progress")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[-1].startswith("simple: 30/30 trials (100%), ")
    assert "trials" not in asked.stdout
    quiet = run_cli("run", spec, "-o", tmp_path / "quiet", "-j", "2")  # stderr is a pipe
    assert quiet.returncode == 0 and quiet.stderr == ""


@pytest.mark.doc(
    "docs/cli.md",
    "`--progress/--no-progress` (`run` and `resume`) — how many trials are done, on stderr: "
    "`eval: 1,234/10,000 trials (12%), 412/s, about 0:21 left`.",
)
def test_the_line_says_what_is_left_and_drops_control_characters() -> None:
    midway = Progress("ev\x1b[31mil\u202e", 250, 1000, 10.0)
    # the escape character and the bidi override go; the rest is harmless text
    assert render(midway) == "ev[31mil: 250/1,000 trials (25%), 25/s, about 0:30 left"
    done = Progress("e", 1000, 1000, 40.0, final=True)
    assert render(done) == "e: 1,000/1,000 trials (100%), 25/s"
    hours = Progress("e", 1, 10_000, 1.0)
    assert render(hours).endswith("about 2:46:39 left")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.doc("docs/cli.md", "On a terminal it is one line redrawn every half second.")
@pytest.mark.parametrize("wanted", [None, True])
def test_on_a_terminal_the_line_is_redrawn_in_place(wanted: bool | None) -> None:
    stream = _Terminal()
    line = progress_line(wanted, stream)
    assert line is not None
    line(Progress("e", 1, 4, 1.0))
    line(Progress("e", 4, 4, 2.0, final=True))
    assert stream.getvalue() == (
        "\re: 1/4 trials (25%), 1/s, about 0:03 left\x1b[K\re: 4/4 trials (100%), 2/s\x1b[K\n"
    )
    assert progress_line(False, _Terminal()) is None
    assert progress_line(None, io.StringIO()) is None  # not a terminal, not asked


def killed_after_five_trials(tmp_path: Path) -> Path:
    """A run of SAMPLES killed (SIGKILL) once at least five trials finished."""
    from tests.helpers import finished_trials, start_cli, wait_for

    spec = unique_callable_spec(tmp_path / "spec", SLOW, samples=SAMPLES)
    run = tmp_path / "run"
    proc = start_cli("run", spec, "-o", run, "-j", "1")
    assert wait_for(lambda: len(finished_trials(run)) >= 5, timeout=60)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    return run


def test_a_resume_counts_the_kept_trials_as_done_but_not_in_its_rate(tmp_path: Path) -> None:
    from assay.pipeline import RunOptions, resume_run
    from tests.helpers import finished_trials

    run = killed_after_five_trials(tmp_path)
    kept = len(finished_trials(run))
    reports: list[Progress] = []
    resume_run(run, RunOptions(output=run, max_concurrency=2, progress=reports.append))
    last = reports[-1]
    assert last.final and last.done == last.planned == len(SAMPLES)
    assert 5 <= last.kept == kept < len(SAMPLES)
    assert last.rate == pytest.approx((last.done - kept) / last.elapsed)


@pytest.mark.doc(
    "docs/cli.md",
    "`--progress/--no-progress` (`run` and `resume`) — how many trials are done, on stderr: ",
)
def test_resume_shows_the_line_when_asked_and_is_silent_by_default(tmp_path: Path) -> None:
    run = killed_after_five_trials(tmp_path)
    quiet = tmp_path / "quiet"
    shutil.copytree(run, quiet)
    asked = run_cli("resume", run, "-j", "2", "--progress")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.splitlines()[-1].startswith(f"simple: {len(SAMPLES)}/{len(SAMPLES)} trials")
    silent = run_cli("resume", quiet, "-j", "2")  # stderr is a pipe, not a terminal
    assert silent.returncode == 0 and silent.stderr == "", silent.stderr


def test_a_progress_line_whose_stderr_is_gone_stays_quiet() -> None:
    stream = _Terminal()
    line = progress_line(True, stream)
    assert line is not None
    stream.close()  # writing now raises ValueError, as a closed pipe raises OSError
    line(Progress("e", 1, 4, 1.0))
    line(Progress("e", 4, 4, 2.0, final=True))  # no exception: the run is not failed


@pytest.mark.doc(
    "docs/cli.md",
    "With `--progress` elsewhere, such as a CI log, it is a line every 10 s and one at the end.",
)
def test_off_a_terminal_the_line_is_logged_every_10_s_and_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The line's own clock is stepped by hand: reports every half second for 25 s log a
    whole line at 10 s and 20 s of it, and the final one, never a carriage return."""
    import assay.cli._progress as module

    now = [1000.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    line = progress_line(True, stream)
    assert line is not None
    for step in range(1, 51):
        now[0] = 1000.0 + step * 0.5
        line(Progress("e", step, 100, step * 0.5, final=step == 50))
    assert stream.getvalue() == (
        "e: 20/100 trials (20%), 2/s, about 0:40 left\n"
        "e: 40/100 trials (40%), 2/s, about 0:30 left\n"
        "e: 50/100 trials (50%), 2/s\n"
    )
