"""Verdicts that cannot read as success when nothing was checked or something broke
(issue 13, "Semantics"), each through the real ``python -m assay``:

- a run with no rule declared is ``ungated`` (exit 0), never ``passed``, in the CLI line
  and in every report, with no green badge;
- evidence comes first even when nothing is gated: a blocked trial, or an errored score,
  makes an ungated run ``inconclusive`` (exit 3);
- a scorer that raises or returns a value no metric can read gives ``error`` scores
  naming the exception, and its unit is not a ``success``;
- a model server answering 200 with a body that is not JSON stops a Python task's run
  (``fail_on_error``): exit 5, reports written with the gate ``stopped`` and the cause,
  the evidence sealed so ``verify`` passes, and ``resume`` finishes it.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from assay.errors import (
    EXIT_CONFIG,
    EXIT_EVIDENCE,
    EXIT_INCONCLUSIVE,
    EXIT_INTERRUPTED,
    EXIT_PASSED,
    EXIT_RUN,
)
from assay.evidence import read_manifest
from tests.helpers import (
    FAST_RETRY,
    read_jsonl,
    run_cli,
    simple_spec,
    start_cli,
    unique_callable_spec,
    wait_for,
    write_module,
)
from tests.servers.openai_compat import OpenAICompatServer, not_json, ok, slow, status

NOT_GATED_LINE = "gate: not gated: no minimum, min_effect or no_regression declared"
WRONG = "def answer(text):\n    return 'wrong'\n"


def gate_line(stdout: str) -> str:
    """The one ``gate:`` line of a command's output."""
    (line,) = [line for line in stdout.splitlines() if line.startswith("gate:")]
    return line


def report_of(run: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((run / "report.json").read_text())
    return report


def css_rule(html: str, name: str) -> str:
    """The declarations of the first style rule whose selector list names ``.name``."""
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", html.split("</style>")[0]):
        if f".{name}" in [s.strip() for s in selectors.split(",")]:
            return str(body).strip()
    raise AssertionError(f"no style rule for .{name}")


def no_rule_spec(folder: Path, source: str = WRONG, **extra: Any) -> Path:
    """A spec whose one target ``t`` answers with *source*, and whose gate declares nothing."""
    spec = unique_callable_spec(folder, source, **extra)
    text = spec.read_text()
    spec.write_text(text.replace("gate:\n  minimum: 1.0\n", ""))
    assert "gate" not in spec.read_text()
    return spec


# -- nothing gated -----------------------------------------------------------------------


@pytest.mark.doc(
    "docs/cli.md",
    "| 0 | gate passed, or `ungated`: no target declares a minimum, `min_effect` or "
    "`no_regression`, so nothing was checked",
    "and for a run with nothing gated `gate: not gated: no minimum, min_effect or "
    "no_regression declared` (exit 0), never `passed`.",
)
@pytest.mark.doc(
    "docs/spec.md",
    "A run in which no target is gated is `ungated`: nothing was checked, and the CLI, "
    "`report.json`, `report.md` and `report.html` say so, never `passed`.",
    "Its status is `ungated`, never `passed`, unless rule 1 makes it `inconclusive`.",
)
def test_a_run_with_no_rule_is_ungated_exit_0_and_never_reads_passed(tmp_path: Path) -> None:
    """0/3 right and no rule: the run is not a pass, it is unchecked; the exit code is 0."""
    run = tmp_path / "run"
    proc = run_cli("run", no_rule_spec(tmp_path / "suite"), "-o", run)
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    line = gate_line(proc.stdout)
    assert line == NOT_GATED_LINE
    assert "passed" not in line
    assert "0/3" in proc.stdout and " ungated " in proc.stdout  # the target's own line

    report = report_of(run)
    assert report["gate"]["status"] == "ungated"
    assert report["gate"]["reasons"] == [NOT_GATED_LINE.removeprefix("gate: ")]
    (target,) = report["gate"]["targets"]
    assert (target["status"], target["gated"]) == ("ungated", False)

    markdown = (run / "report.md").read_text()
    assert "**Gate: UNGATED** — not gated: no minimum" in markdown
    assert "PASSED" not in markdown

    html = (run / "report.html").read_text()
    assert '<span class="badge ungated" id="gate-status">ungated</span>' in html
    assert '<span class="badge ungated">ungated</span>' in html  # the target's row
    assert 'class="badge passed"' not in html
    green = css_rule(html, "passed")
    neutral = css_rule(html, "ungated")
    assert neutral != green and "#dcf5e3" not in neutral and "#11602b" not in neutral

    for command in ("gate", "score"):
        again = run_cli(command, run)
        assert again.returncode == EXIT_PASSED, again.stdout + again.stderr
        assert gate_line(again.stdout) == NOT_GATED_LINE


@pytest.mark.doc(
    "docs/cli.md",
    "and no trial was blocked, invalid or unrun and no score unscorable or errored;",
    "| 3 | gate inconclusive: the evidence cannot tell, whether or not anything was gated;",
)
@pytest.mark.doc(
    "docs/spec.md",
    "Evidence comes first on every target: an ungated target that rule 1 makes "
    "`inconclusive` makes the run `inconclusive` too,",
)
def test_an_ungated_run_with_a_blocked_trial_is_inconclusive_3(tmp_path: Path) -> None:
    source = (
        "def answer(text):\n"
        "    if text == 'q1':\n"
        "        raise ConnectionError('connection refused')\n"
        "    return text\n"
    )
    run = tmp_path / "run"
    proc = run_cli("run", no_rule_spec(tmp_path / "suite", source, retry=FAST_RETRY), "-o", run)
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    assert gate_line(proc.stdout) == "gate: inconclusive"
    assert "  - t: 1 trial(s) blocked" in proc.stdout
    report = report_of(run)
    assert report["gate"]["status"] == "inconclusive"
    assert "t: 1 trial(s) blocked" in report["gate"]["reasons"]
    assert run_cli("gate", run).returncode == EXIT_INCONCLUSIVE


@pytest.mark.doc(
    "docs/spec.md",
    "while an ungated target with sound evidence changes nothing (a gated target that "
    "passes beside it makes the run `passed`).",
)
def test_a_passing_gated_target_beside_an_ungated_one_passes(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    write_module(folder, "mixed_targets", "def good(text):\n    return text\n\n" + WRONG)
    targets = [
        {"id": "good", "callable": "mixed_targets:good"},
        {"id": "bad", "callable": "mixed_targets:answer"},
    ]
    spec = simple_spec(folder, targets=targets, gate={"targets": {"good": 1.0}})
    proc = run_cli("run", spec, "-o", tmp_path / "run")
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    assert gate_line(proc.stdout) == "gate: passed"
    decisions = {
        t["target_id"]: t["status"] for t in report_of(tmp_path / "run")["gate"]["targets"]
    }
    assert decisions == {"good": "passed", "bad": "ungated"}


def test_every_model_call_failing_makes_an_ungated_python_task_inconclusive(
    tmp_path: Path,
) -> None:
    """The issue's example: every call got 502, every trial is blocked; exit 3, not 0."""
    write_module(tmp_path, "tasks", HELLO)
    with OpenAICompatServer([status(502)] * 200) as server:
        proc = run_cli(
            "run", "tasks.py@hello", "--model", "openai/m", "--model-base-url", server.url,
            "-M", "max_retries=0", "-o", tmp_path / "run",
            cwd=tmp_path, env={"OPENAI_API_KEY": "test-key"},
        )  # fmt: skip
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    assert gate_line(proc.stdout) == "gate: inconclusive"
    assert "  - openai/m: 3 trial(s) blocked" in proc.stdout
    assert report_of(tmp_path / "run")["gate"]["status"] == "inconclusive"


# -- a scorer that fails -----------------------------------------------------------------

HELLO = """
from assay import Sample, Task, generate, includes, task


@task
def hello():
    return Task(
        dataset=[Sample(input="hi", target="x", id=f"s{i}") for i in range(3)],
        solver=[generate()],
        scorer=includes(),
    )
"""

BROKEN_SCORER = """
from assay import Sample, Score, Task, accuracy, generate, scorer, task


@scorer(metrics=[accuracy()])
def broken():
    async def score(state, target):
        {body}

    return score


@task
def graded():
    return Task(
        dataset=[Sample(input="hi", target="x", id=f"s{{i}}") for i in range(3)],
        solver=[generate()],
        scorer=broken(),
    )
"""


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            "return Score(value={'a': {'b': 1}})",
            "InvalidScoreValue: invalid Score value {'b': 1} (dict)",
        ),
        ("return Score(value='maybe')", "InvalidScoreValue: invalid Score value 'maybe' (str)"),
        ("return Score(value=float('nan'))", "InvalidScoreValue: invalid Score value nan"),
        ("return None", "TypeError: the scorer returned NoneType, not a Score"),
        ("raise RuntimeError('grader down')", "RuntimeError: grader down"),
    ],
    ids=["dict", "word", "nan", "none", "raises"],
)
@pytest.mark.doc(
    "docs/cli.md",
    "A unit that ends in error prints why on stderr, and its line says `error`, never "
    "`success`: its errors passed `fail_on_error`, or a scorer raised or returned a value "
    "that is not a letter, a bool or a finite number, or a dict or list of them (`3 scorer "
    "error(s) (the first: …)`, naming the exception).",
    "A unit whose scorers failed runs to its end and exits with its gate's code: 3, since "
    "an errored score is evidence the gate cannot stand on.",
)
@pytest.mark.doc(
    "docs/spec.md",
    "A scorer that raises, or returns a value that is not a letter (`C`, `I`, `P`, `N`), a "
    "bool or a finite number, or a dict or list of them, gives an `error` score naming the "
    "exception, so a run with one is never `passed`.",
)
def test_a_failing_scorer_gives_error_scores_and_an_inconclusive_gate(
    tmp_path: Path, body: str, named: str
) -> None:
    write_module(tmp_path, "tasks", BROKEN_SCORER.format(body=body))
    run = tmp_path / "run"
    proc = run_cli("run", "tasks.py@graded", "-m", "mock/x", "-o", run, cwd=tmp_path)
    assert proc.returncode == EXIT_INCONCLUSIVE, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == "== graded × mock/x: error"
    assert "success" not in proc.stdout
    (error,) = proc.stderr.splitlines()
    assert error.startswith("   3 scorer error(s) (the first: broken: scorer crashed: ")
    assert named in proc.stderr
    assert gate_line(proc.stdout) == "gate: inconclusive"
    assert "  - mock/x: broken: 3 scorer errors" in proc.stdout

    scores = read_jsonl(run / "scores.jsonl")
    assert [s["status"] for s in scores] == ["error"] * 3
    assert all(named in s["reason"] for s in scores)
    assert report_of(run)["gate"]["status"] == "inconclusive"
    assert run_cli("gate", run, cwd=tmp_path).returncode == EXIT_INCONCLUSIVE


@pytest.mark.doc("docs/cli.md", "| 2 | usage or configuration error: nothing was run |")
def test_a_unit_refused_before_its_run_exits_2(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", HELLO)
    proc = run_cli(
        "run", "tasks.py@hello", "-m", "mock/x", "-o", tmp_path / "run", "--sample-id", "nope",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    assert proc.stdout == "== hello × mock/x: error\n"
    (error,) = proc.stderr.splitlines()
    assert "no sample has the id 'nope'" in error


# -- a run that stops on a fatal error ---------------------------------------------------


@pytest.mark.doc(
    "docs/cli.md",
    "A unit its errors stopped (its `fail_on_error` reached) is a stopped run: exit 5",
    "a Python task's errors past `fail_on_error`",
    "A run that stops on a fatal error while its trials run (the event sink failing, a "
    "Python task's errors past `fail_on_error`) is still judged and reported: it prints "
    "`gate: stopped: <the cause>` and the one-line error, writes `report.json`, "
    "`report.md` and `report.html` with the gate's status `stopped` and the cause as its "
    "first reason, seals the run as `interrupted` (so `assay verify` checks it and "
    "`assay resume` can finish it) and exits 5.",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "A run stopped by a fatal error (see `docs/cli.md`) is sealed as `interrupted` with its "
    "reports, their digests in the manifest's `files` (so `verify` checks them), and no "
    "indexes; its resume deletes those reports as it starts and writes new ones when it is "
    "sealed.",
)
def test_a_server_answering_200_with_no_json_stops_the_run_with_reports_and_exit_5(
    tmp_path: Path,
) -> None:
    write_module(tmp_path, "tasks", HELLO)
    run = tmp_path / "run"
    env = {"OPENAI_API_KEY": "test-key"}
    with OpenAICompatServer([not_json()], reply=lambda payload: "x") as server:
        args = ("--model", "openai/m", "--model-base-url", server.url, "-M", "max_retries=0")
        proc = run_cli("run", "tasks.py@hello", *args, "-o", run, "-j", "1", cwd=tmp_path, env=env)
        assert proc.returncode == EXIT_RUN, proc.stdout + proc.stderr
        assert proc.stdout.splitlines()[0] == "== hello × openai/m: error"
        cause = "not a chat completion (JSON is malformed"
        (error,) = proc.stderr.splitlines()
        assert "fail_on_error=True; the run stopped" in error and cause in error
        stopped = gate_line(proc.stdout)
        assert stopped.startswith("gate: stopped: 1 trial(s) errored") and cause in stopped

        report = report_of(run)
        assert report["gate"]["status"] == "stopped"
        assert report["run_status"] == "interrupted"
        assert cause in report["gate"]["reasons"][0]
        assert (
            "**Gate: STOPPED** — the run stopped before its end:" in (run / "report.md").read_text()
        )
        html = (run / "report.html").read_text()
        assert '<span class="badge stopped" id="gate-status">stopped</span>' in html
        assert "#dcf5e3" not in css_rule(html, "stopped")

        manifest = read_manifest(run)
        assert manifest["status"] == "interrupted"
        assert {"report.json", "report.md", "report.html"} <= set(manifest["files"])
        verified = run_cli("verify", run)  # consistent, and unfinished: exit 3
        assert verified.returncode == EXIT_INCONCLUSIVE, verified.stdout + verified.stderr
        (run / "report.md").write_text("**Gate: PASSED**\n")  # the reports are evidence
        assert run_cli("verify", run).returncode == EXIT_EVIDENCE
        (run / "report.md").unlink()

        assert not (run / "bundles.idx").exists()

        # a resume deletes the stopped run's reports as it starts: interrupted while its
        # first call hangs, it leaves no report behind (none would be its verdict)
        requests = len(server.requests)
        server.push(slow(60))
        resuming = start_cli("resume", run, "-j", "1", cwd=tmp_path, env=env)
        assert wait_for(lambda: len(server.requests) > requests, timeout=60)
        assert not (run / "report.json").exists()
        resuming.send_signal(signal.SIGINT)
        _, err = resuming.communicate(timeout=30)
        assert resuming.returncode == EXIT_INTERRUPTED, err
        assert not [p.name for p in run.glob("report.*")]
        assert run_cli("verify", run).returncode == EXIT_INCONCLUSIVE

        server.push(ok(), ok())  # the server is fixed: resume runs the two trials left
        resumed = run_cli("resume", run, cwd=tmp_path, env=env)
    # the errored trial is kept, and its score is doubtful: inconclusive, with new reports
    assert resumed.returncode == EXIT_INCONCLUSIVE, resumed.stdout + resumed.stderr
    assert gate_line(resumed.stdout) == "gate: inconclusive"
    assert "  - openai/m: includes: 1 unscorable" in resumed.stdout
    report = report_of(run)
    assert report["gate"]["status"] == "inconclusive" and report["run_status"] == "complete"
    assert "STOPPED" not in (run / "report.md").read_text()
    assert read_manifest(run)["status"] == "complete"
    assert run_cli("verify", run).returncode == EXIT_PASSED
