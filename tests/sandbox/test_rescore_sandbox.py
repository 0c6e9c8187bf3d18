"""``assay score`` re-judges a scorer that used the sample's sandbox from the evidence:
its commands and file reads are answered as the run recorded them, and nothing runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import anyio
import pytest

from assay.sandbox._replayed import NotRecorded, ReplayedSandbox
from tests.helpers import events_of, read_jsonl, run_cli

TASK = """
from assay import Sample, Score, Task, accuracy, scorer, solver, task
from assay.sandbox import sandbox

LEDGER = {ledger!r}


@solver
def writes_answer():
    async def solve(state, generate):
        await sandbox().exec(["bash", "-c", "echo $((6 * 7)) > answer.txt"])
        return state
    return solve


@scorer(metrics=[accuracy()])
def checks_in_sandbox():
    async def score(state, target):
        # a command with a side effect on the host: it must not run again on re-score
        ran = await sandbox().exec(["bash", "-c", f"echo ran >> {{LEDGER}}; cat answer.txt"])
        read = await sandbox().read_file("answer.txt")
        ok = ran.stdout.strip() == read.strip() == target.text
        return Score(value="C" if ok else "I", answer=read.strip())
    return score


@task
def sandboxed():
    samples = [Sample(input="q", target="42", id=1), Sample(input="q", target="41", id=2)]
    return Task(dataset=samples, solver=writes_answer(), scorer=checks_in_sandbox(),
                sandbox="local")
"""


def test_assay_score_replays_the_scorers_sandbox_and_runs_nothing(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.txt"
    module = tmp_path / "sandboxed.py"
    module.write_text(textwrap.dedent(TASK.format(ledger=str(ledger))))
    run = tmp_path / "run"
    done = run_cli("run", module, "--model", "mock/x", "-o", run)
    assert done.returncode == 0, done.stderr
    assert ledger.read_text() == "ran\nran\n"
    before = [(s["sample_id"], s["value"]) for s in read_jsonl(run / "scores.jsonl")]
    assert sorted(before) == [("1", 1.0), ("2", 0.0)]
    assert len(events_of(run, "score_sandbox_read")) == 2

    rescored = run_cli("score", run)
    assert rescored.returncode == 0, rescored.stderr
    assert ledger.read_text() == "ran\nran\n"  # the scorer's command did not run again
    after = [(s["sample_id"], s["value"]) for s in read_jsonl(run / "scores.jsonl")]
    assert sorted(after) == sorted(before)
    assert run_cli("verify", run).returncode == 0


def test_a_command_the_run_did_not_record_is_refused() -> None:
    sandbox = ReplayedSandbox("default", {}, lambda sha: b"")

    async def ask() -> None:
        await sandbox.exec(["rm", "-rf", "/"])

    with pytest.raises(NotRecorded, match="never run again"):
        anyio.run(ask)
