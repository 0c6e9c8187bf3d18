"""Progress reports: every half second while a run goes on, and one final report at its
end; the CLI's line on stderr (``--progress``), silent by default off a terminal."""

from __future__ import annotations

import io
import shutil
import signal
from pathlib import Path

import pytest

from assay.cli._progress import bar, progress_line, render
from assay.errors import EXIT_INCONCLUSIVE
from assay.pipeline import Progress
from tests.helpers import FAST_RETRY, REPO, run_cli, run_spec_at, unique_callable_spec

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


@pytest.mark.doc("docs/cli.md", "redrawn every half second")
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
    "`--progress/--no-progress` (`run` and `resume`) — how the run is going, on stderr:",
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
    "`--progress/--no-progress` (`run` and `resume`) — how the run is going, on stderr:",
    "That is the trials done of those planned, the rate, the time left",
)
def test_the_line_says_what_is_left_and_drops_control_characters() -> None:
    midway = Progress("ev\x1b[31mil\u202e", 250, 1000, 10.0)
    # the escape character and the bidi override go; the rest is harmless text
    assert render(midway) == (
        "ev[31mil: 250/1,000 trials (25%), 25/s, about 0:30 left, 0 error(s), 0 retry(ies)"
    )
    done = Progress("e", 1000, 1000, 40.0, final=True)
    assert render(done) == "e: 1,000/1,000 trials (100%), 25/s, 0 error(s), 0 retry(ies)"
    hours = Progress("e", 1, 10_000, 1.0)
    assert "about 2:46:39 left" in render(hours)


@pytest.mark.doc(
    "docs/cli.md",
    "`eval: 1,234/10,000 trials (12%), 412/s, about 0:21 left, pass a 98%, b 71%, 3 error(s), "
    "5 retry(ies), 120,345 tokens, $0.0123`.",
    "and, once a model was called, the targets' tokens and cost.",
    "Below one trial a second the rate is in seconds per trial (`2.5 s/trial`), and before "
    "this process finishes a trial there is no rate: never `0/s`.",
)
def test_the_line_gives_pass_rates_errors_retries_usage_and_a_slow_rate() -> None:
    going = Progress(
        "eval", 1234, 10_000, 3.0, pass_rates={"a": (98, 100), "b": (71, 100)},
        errors=3, retries=5, tokens=120_345, cost=0.0123,
    )  # fmt: skip
    assert render(going) == (
        "eval: 1,234/10,000 trials (12%), 411/s, about 0:21 left, pass a 98%, b 71%, "
        "3 error(s), 5 retry(ies), 120,345 tokens, $0.0123"
    )
    slow = Progress("e", 4, 10, 10.0)
    assert render(slow) == (
        "e: 4/10 trials (40%), 2.5 s/trial, about 0:15 left, 0 error(s), 0 retry(ies)"
    )
    nothing_yet = Progress("e", 0, 10, 5.0)
    assert render(nothing_yet) == "e: 0/10 trials (0%), 0 error(s), 0 retry(ies)"
    unpriced = Progress("e", 10, 10, 5.0, final=True, tokens=12, cost=None)
    assert render(unpriced).endswith(", 12 tokens, unknown")


@pytest.mark.doc(
    "docs/cli.md",
    "On a cluster the progress line ends with the workers the scheduler has (`, 2 worker(s)`)",
)
def test_on_a_cluster_the_line_ends_with_its_workers() -> None:
    on_cluster = Progress("e", 1, 4, 1.0, workers=2)
    assert render(on_cluster) == (
        "e: 1/4 trials (25%), 1/s, about 0:03 left, 0 error(s), 0 retry(ies), 2 worker(s)"
    )
    none_left = Progress("e", 1, 4, 1.0, workers=0)  # said, not hidden: why it slows down
    assert render(none_left).endswith(", 0 worker(s)")
    assert "worker" not in render(Progress("e", 1, 4, 1.0))  # a local run


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.doc(
    "docs/cli.md",
    "On a terminal it is a bar drawn by tqdm, redrawn every half second and cut to the "
    "terminal's width",
)
@pytest.mark.parametrize("wanted", [None, True])
def test_on_a_terminal_the_line_is_redrawn_in_place(wanted: bool | None) -> None:
    stream = _Terminal()
    line = progress_line(wanted, stream)
    assert line is not None
    line(Progress("e", 1, 4, 1.0))
    line(Progress("e", 4, 4, 2.0, final=True))
    assert stream.getvalue() == (
        "\re:  25%|█████               | 1/4, 1/s, about 0:03 left, 0 error(s), 0 retry(ies)"
        "\x1b[K"
        "\re: 100%|████████████████████| 4/4, 2/s, 0 error(s), 0 retry(ies)\x1b[K\n"
    )
    assert bar(Progress("e", 1, 4, 1.0), 30) == "e:  25%|█████               |"  # cut
    assert progress_line(False, _Terminal()) is None
    assert progress_line(None, io.StringIO()) is None  # not a terminal, not asked


FLAKY = """
import pathlib


def answer(text):
    if text == "q1":
        raise ConnectionError("always down")  # blocked after its attempts
    marker = pathlib.Path(__file__).with_name("failed-once")
    if text == "q0" and not marker.exists():
        marker.touch()
        raise ConnectionError("down once")  # a retry, then an answer
    return text
"""


@pytest.mark.doc(
    "docs/cli.md",
    "each target's running pass rate (its first scorer's passes over the trials scored so "
    "far), the trials that ended blocked, invalid or in error, the retries (attempts after a "
    "trial's first)",
)
def test_a_real_run_counts_errors_retries_and_its_pass_rate(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(3)]
    spec = unique_callable_spec(
        tmp_path / "spec", FLAKY, samples=samples, retry=FAST_RETRY, gate={}
    )
    proc = run_cli("run", spec, "-o", tmp_path / "run", "--progress")
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr  # one blocked
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("simple: 3/3 trials (100%), "), last
    assert last.endswith(", pass t 67%, 1 error(s), 3 retry(ies)"), last  # 1 + 2 retries


TOKENS = """
from assay import Sample, Task, includes, task


@task
def quiz():
    return Task(dataset=[Sample(input="q", target="four", id="a")], scorer=includes())
"""


@pytest.mark.doc("docs/cli.md", "and, once a model was called, the targets' tokens and cost.")
def test_a_python_task_line_counts_its_tokens(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(TOKENS, encoding="utf-8")
    proc = run_cli(
        "run", "tasks.py@quiz", "-m", "mock/a", "-M", "default_output=four",
        "-o", tmp_path / "run", "--progress", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.endswith(", pass mock/a 100%, 0 error(s), 0 retry(ies), 2 tokens, unknown"), last


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
    "`--progress/--no-progress` (`run` and `resume`) — how the run is going, on stderr:",
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
        "e: 20/100 trials (20%), 2/s, about 0:40 left, 0 error(s), 0 retry(ies)\n"
        "e: 40/100 trials (40%), 2/s, about 0:30 left, 0 error(s), 0 retry(ies)\n"
        "e: 50/100 trials (50%), 2/s, 0 error(s), 0 retry(ies)\n"
    )
