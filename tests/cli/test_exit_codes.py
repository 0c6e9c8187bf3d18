"""Exit codes (docs/cli.md): 0 passed, 1 failed, 2 config, 3 inconclusive, 4 evidence,
5 run could not go on, 70 internal error; each through the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assay.errors import (
    EXIT_CONFIG,
    EXIT_EVIDENCE,
    EXIT_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PASSED,
    EXIT_RUN,
)
from tests.helpers import (
    callable_spec,
    error_line,
    finished_trials,
    run_cli,
    simple_spec,
    unique_callable_spec,
    write_module,
)

FAST_RETRY = {"max_attempts": 2, "initial_backoff": 0.01, "max_backoff": 0.01}


def test_documented_values() -> None:
    codes = (EXIT_PASSED, EXIT_FAILED, EXIT_CONFIG, EXIT_INCONCLUSIVE, EXIT_EVIDENCE, EXIT_RUN)
    assert codes == (0, 1, 2, 3, 4, 5)
    assert (EXIT_INTERNAL, EXIT_INTERRUPTED) == (70, 130)


def _run(spec: Path, out: Path) -> tuple[int, str, dict[str, object]]:
    proc = run_cli("run", spec, "--output", out)
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads((out / "report.json").read_text())
    return proc.returncode, proc.stdout, report


@pytest.mark.doc(
    "docs/cli.md",
    "| 0 | gate passed, or `ungated`",
)
def test_passed_is_0(tmp_path: Path) -> None:
    code, stdout, report = _run(simple_spec(tmp_path / "suite"), tmp_path / "run")
    assert code == EXIT_PASSED
    assert "gate: passed" in stdout
    assert report["gate"]["status"] == "passed"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_PASSED


@pytest.mark.doc(
    "docs/cli.md",
    "| 1 | gate failed",
    "| `gate RUN [--baseline BASE]` | verify, then re-decide the gate from the evidence; exit "
    "code is the decision |",
)
def test_failed_is_1(tmp_path: Path) -> None:
    spec = callable_spec(tmp_path / "suite", "def answer(text):\n    return 'wrong'\n")
    code, stdout, report = _run(spec, tmp_path / "run")
    assert code == EXIT_FAILED
    assert "gate: failed" in stdout
    assert report["gate"]["status"] == "failed"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_FAILED


def test_a_crashing_target_fails_it_is_not_retried_away(tmp_path: Path) -> None:
    """A product crash is a product result: failed (1), not inconclusive."""
    spec = callable_spec(
        tmp_path / "suite", "def answer(text):\n    raise ValueError('bug')\n", retry=FAST_RETRY
    )
    code, stdout, _ = _run(spec, tmp_path / "run")
    assert code == EXIT_FAILED, stdout


@pytest.mark.doc(
    "docs/cli.md",
    "| 3 | gate inconclusive: the evidence cannot tell",
    "| `gate RUN [--baseline BASE]` | verify, then re-decide the gate from the evidence; exit "
    "code is the decision |",
)
def test_blocked_trials_are_inconclusive_3(tmp_path: Path) -> None:
    spec = callable_spec(
        tmp_path / "suite",
        "def answer(text):\n    raise ConnectionError('connection refused')\n",
        retry=FAST_RETRY,
    )
    code, stdout, report = _run(spec, tmp_path / "run")
    assert code == EXIT_INCONCLUSIVE, stdout
    assert "gate: inconclusive" in stdout
    assert "blocked" in stdout
    assert report["gate"]["status"] == "inconclusive"  # type: ignore[index]
    assert run_cli("gate", tmp_path / "run").returncode == EXIT_INCONCLUSIVE


def test_one_blocked_target_makes_the_run_inconclusive(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    source = (
        "def good(text):\n    return text\n\n"
        "def down(text):\n    raise TimeoutError('upstream timed out')\n"
    )
    write_module(folder, "target_mod", source)
    spec = simple_spec(
        folder,
        targets=[
            {"id": "good", "callable": "target_mod:good"},
            {"id": "down", "callable": "target_mod:down"},
        ],
        retry=FAST_RETRY,
    )
    code, _, report = _run(spec, tmp_path / "run")
    assert code == EXIT_INCONCLUSIVE
    decisions = {d["target_id"]: d["status"] for d in report["gate"]["targets"]}  # type: ignore[index]
    assert decisions == {"good": "passed", "down": "inconclusive"}


@pytest.mark.doc(
    "docs/cli.md",
    "| 2 | usage or configuration error: nothing was run |",
)
def test_config_error_is_2_and_nothing_is_written(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite", repetitions=0)
    proc = run_cli("run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    error_line(proc)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "ref", ["nowhere:answer", "target_mod:missing", "target_mod", "target_mod:VALUE"]
)
def test_unloadable_callable_is_a_config_error(tmp_path: Path, ref: str) -> None:
    folder = tmp_path / "suite"
    callable_spec(folder, "VALUE = 3\n\ndef answer(text):\n    return text\n")
    spec = simple_spec(folder, targets=[{"id": "t", "callable": ref}])
    proc = run_cli("run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    line = error_line(proc)
    assert ref in line and "'t'" in line
    assert not (tmp_path / "run").exists()


def test_debug_shows_the_traceback_of_a_config_error(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite", gate={"minimum": 1.5})
    proc = run_cli("--debug", "run", spec, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ConfigError" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("assay: ")

    quiet = run_cli("run", spec, "--output", tmp_path / "run")
    assert quiet.returncode == EXIT_CONFIG
    assert error_line(quiet) == proc.stderr.splitlines()[-1]


@pytest.mark.doc(
    "docs/cli.md",
    "It must not hold a run already.",
)
def test_run_into_an_existing_run_refuses_with_5(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite")
    out = tmp_path / "run"
    assert run_cli("run", spec, "--output", out).returncode == EXIT_PASSED
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    again = run_cli("run", spec, "--output", out)
    assert again.returncode == EXIT_RUN
    line = error_line(again)
    assert str(out) in line and "already" in line

    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before, "the refused run must not touch the old one"
    assert run_cli("verify", out).returncode == 0


def test_run_into_an_existing_empty_folder_is_fine(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    assert run_cli("run", simple_spec(tmp_path / "suite"), "--output", out).returncode == 0
    assert (out / "manifest.json").exists()


# -- score: recomputed scores that differ ------------------------------------------------

JUDGED_BY_THE_ENVIRONMENT = """
import os

from assay import Sample, Score, Task, accuracy, scorer, task


@scorer(metrics=[accuracy()])
def strictness():
    async def score(state, target):
        return Score(value=0 if os.environ.get("QUIZ_STRICT") else 1)

    return score


@task
def quiz():
    return Task(
        dataset=[Sample(input=f"question {i}", target="four", id=f"s{i}") for i in range(3)],
        scorer=strictness(),
    )
"""


@pytest.mark.doc(
    "docs/cli.md",
    "| `score RUN [--baseline BASE]` | verify, then re-score every trial from the evidence; "
    "compare with the recorded scores |",
    "`score`: scores equal the recorded ones",
    "`score`: recomputed scores differ",
)
def test_score_is_0_when_rescored_scores_equal_and_4_when_they_differ(tmp_path: Path) -> None:
    """The scorer reads the environment, not the evidence: the evidence still verifies,
    but scored again under another environment it gives other values."""
    write_module(tmp_path, "tasks", JUDGED_BY_THE_ENVIRONMENT)
    run = tmp_path / "run"
    ran = run_cli("run", "tasks.py@quiz", "-m", "mock/a", "-o", run, cwd=tmp_path)
    assert ran.returncode == EXIT_PASSED, ran.stdout + ran.stderr

    same = run_cli("score", run, cwd=tmp_path)
    assert same.returncode == EXIT_PASSED, same.stdout + same.stderr
    assert same.stdout.splitlines()[-1] == (
        "re-scored 3 scores from evidence: all equal the recorded ones"
    )

    other = run_cli("score", run, cwd=tmp_path, env={"QUIZ_STRICT": "1"})
    assert other.returncode == EXIT_EVIDENCE, other.stdout + other.stderr
    assert other.stderr == ""
    last = other.stdout.splitlines()[-1]
    assert last.startswith("re-scored 3 scores from evidence: 3 differ from the recorded ones")
    recorded = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert f"(first: {recorded[0]['score_id']})" in last
    assert "0/3" in other.stdout  # what it recomputed, not what was recorded
    assert run_cli("verify", run).returncode == EXIT_PASSED  # the evidence is untouched


# -- 70: a bug ---------------------------------------------------------------------------

A_BUG_IN_THE_GATE = """
import sys

import assay.pipeline._conclude


def decide(*args, **kwargs):
    return {}["gate"]  # a bug: the real CLI on, with the gate step broken


assay.pipeline._conclude.decide = decide
from assay.cli import main

main(sys.argv[1:])
"""


def run_with_a_bug(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` in a process whose gate step raises KeyError, as a bug would (the
    assay this test imports, wherever the process starts)."""
    import assay

    source = Path(assay.__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", A_BUG_IN_THE_GATE, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "LANG": "C.UTF-8", "PYTHONPATH": str(source)},
        timeout=120,
        check=False,
    )


@pytest.mark.doc(
    "docs/cli.md",
    "| 70 | internal error: a bug (rerun with `--debug`) |",
    "`--debug` — print tracebacks; without it, every error is one line: "
    "`assay: <what and where> — <how to fix>`.",
)
def test_an_internal_error_is_70_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path / "suite")
    quiet = run_with_a_bug("run", spec, "-o", tmp_path / "quiet", cwd=tmp_path)
    assert quiet.returncode == EXIT_INTERNAL, quiet.stdout + quiet.stderr
    line = error_line(quiet)
    assert line == (
        "assay: internal error: KeyError: 'gate' — "
        "rerun with --debug for the traceback and report it"
    )

    loud = run_with_a_bug("--debug", "run", spec, "-o", tmp_path / "loud", cwd=tmp_path)
    assert loud.returncode == EXIT_INTERNAL, loud.stdout + loud.stderr
    assert loud.stderr.startswith("Traceback (most recent call last)")
    assert ", in decide\n" in loud.stderr  # the frame of the bug itself
    assert loud.stderr.splitlines()[-1] == line


# -- resume refuses a changed spec -------------------------------------------------------

STOPS_ITSELF = """
import asyncio
import os
import signal


async def answer(n):
    if n == 2 and os.environ.get("STOP_AT_2"):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as a user would, mid-run
        await asyncio.sleep(60)
    return str(n)
"""


@pytest.mark.doc(
    "docs/cli.md",
    "finish an interrupted run: keep finished trials, run the rest",
    "`resume` of a run whose spec changed",
)
@pytest.mark.doc(
    "docs/evidence.md",
    "A YAML run is resumed with the same spec file (refused, naming the changed fields, "
    "if it changed)",
)
def test_resume_refuses_a_changed_spec_naming_the_changed_fields(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": i, "expected": str(i)} for i in range(6)]
    spec = unique_callable_spec(tmp_path / "suite", STOPS_ITSELF, samples=samples)
    run = tmp_path / "run"
    stopped = run_cli("run", spec, "-o", run, "-j", "1", env={"STOP_AT_2": "1"})
    assert stopped.returncode == EXIT_INTERRUPTED, stopped.stdout + stopped.stderr
    kept = finished_trials(run)
    assert len(kept) == 2

    original = spec.read_bytes()
    changed = yaml.safe_load(original)
    changed["gate"] = {"minimum": 0.5}
    spec.write_text(yaml.safe_dump(changed, sort_keys=False))
    other = spec.with_name("other.yaml")
    other.write_text(yaml.safe_dump({**changed, "evaluation": "renamed"}, sort_keys=False))

    for args, fields in (((), "gate"), (("--spec", other), "evaluation, gate")):
        refused = run_cli("resume", run, *args)
        assert refused.returncode == EXIT_RUN, refused.stdout + refused.stderr
        assert error_line(refused) == (
            f"assay: the spec no longer matches the run in {run}: changed: {fields} — "
            "restore the spec and dataset the run was started with, or start a new run"
        )
        assert finished_trials(run) == kept  # nothing ran

    spec.write_bytes(original)
    resumed = run_cli("resume", run)
    assert resumed.returncode == EXIT_PASSED, resumed.stdout + resumed.stderr
    assert len(finished_trials(run)) == 6 and kept <= finished_trials(run)


@pytest.mark.doc(
    "docs/cli.md",
    "`resume` of a run whose spec changed or that is already complete",
)
def test_resume_of_a_complete_run_is_5_and_changes_nothing(tmp_path: Path) -> None:
    code, _, _ = _run(simple_spec(tmp_path / "suite"), tmp_path / "run")
    assert code == EXIT_PASSED
    manifest = (tmp_path / "run" / "manifest.json").read_bytes()
    proc = run_cli("resume", tmp_path / "run")
    assert proc.returncode == EXIT_RUN
    assert "already complete" in error_line(proc)
    assert (tmp_path / "run" / "manifest.json").read_bytes() == manifest
