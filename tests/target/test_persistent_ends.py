"""Persistent program targets (``protocol: jsonl``) at the edges of a program's life: a
last answer without a newline, and what it wrote to stderr as ``assay show`` prints it.
Run for real through the CLI, with the builders of ``test_persistent.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import bundles_by_sample, edit_artifact, error_line, events_of, run_cli
from tests.target._persistent import CHATTY, logged_pids, program_spec, sample_list

ONE_AND_DONE = """
import json, os, sys

with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
request = json.loads(sys.stdin.readline())
sys.stdout.write(json.dumps({"id": request["id"], "output": request["input"]}))  # no newline
"""


@pytest.mark.doc("docs/spec.md", "The program's last answer may end without a newline.")
def test_a_last_answer_without_a_newline_answers_its_call(tmp_path: Path) -> None:
    spec, log = program_spec(tmp_path, ONE_AND_DONE, sample_list("a", "b", "c"))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(logged_pids(log)) == 3  # each call found the last process gone and started one
    assert events_of(run, "error") == []  # an ended program with no call in flight is no failure


@pytest.mark.doc(
    "docs/cli.md",
    "What a program target wrote to stderr during the trial's call (a `protocol: jsonl` "
    "program's, in the call's window) is shown as `stderr`, checked as its output is.",
)
def test_show_prints_the_stderr_of_the_calls_window(tmp_path: Path) -> None:
    spec, _ = program_spec(tmp_path, CHATTY, sample_list("a", "b", "c"))
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run, "-j", "1")  # one call at a time: one line each
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = run_cli("show", run, "s1")
    assert shown.returncode == 0, shown.stderr
    assert "  stderr: working on s1\n" in shown.stdout
    sha = bundles_by_sample(run)["s1"]["artifacts"]["stderr"]
    edit_artifact(run, sha, lambda data: data.replace(b"s1", b"s9"))
    edited = run_cli("show", run, "s1")
    assert edited.returncode == 4 and "stderr" in error_line(edited)
