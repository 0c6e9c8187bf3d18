"""``assay score`` replays ``python_tests``'s recorded sandbox runs: model code never runs again."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import assay
from assay.model import ModelOutput, Replay, replay_scope
from assay.score import CORRECT, python_tests
from assay.score._code import ExecNotRecorded
from assay.solver import Target, TaskState
from tests.helpers import events_of, read_jsonl, run_cli

# The candidate appends a line to a host file each time it runs: possible only without
# isolation, which is why this task asks for the `local` sandbox.
TASK = """
from assay import Sample, Task, python_tests, solver, task
from assay.model import ModelOutput

TESTS = "assert add(2, 3) == 5\\n"
WITNESS = {witness!r}
PROGRAMS = {{
    "right": f"open({{WITNESS!r}}, 'a').write('ran\\\\n')\\ndef add(a, b):\\n    return a + b\\n",
    "wrong": f"open({{WITNESS!r}}, 'a').write('ran\\\\n')\\ndef add(a, b):\\n    return a - b\\n",
}}


@solver
def answer_with_the_input():
    async def solve(state, generate):
        state.output = ModelOutput.from_content(state.model, state.input_text)
        return state

    return solve


@task
def witnessed():
    samples = [Sample(id=name, input=code, target=TESTS) for name, code in PROGRAMS.items()]
    return Task(dataset=samples, solver=answer_with_the_input(),
                scorer=python_tests(sandbox="local", timeout=60))
"""


def _env() -> dict[str, str]:
    return {"PYTHONPATH": str(Path(assay.__file__).resolve().parents[1])}


@pytest.mark.doc(
    "docs/cli.md",
    "`score` never runs model-written code again either: a code scorer's sandbox runs "
    "(`python_tests`) are recorded as `score_exec` events during the run, and `score` "
    "replays them;",
)
def test_rescoring_replays_the_recorded_runs_and_never_runs_the_code(tmp_path: Path) -> None:
    witness = tmp_path / "witness.txt"
    (tmp_path / "witnessed.py").write_text(TASK.format(witness=str(witness)))
    done = run_cli("run", "witnessed.py@witnessed", "--model", "mock/x", cwd=tmp_path, env=_env())
    assert done.returncode == 0, done.stderr
    assert witness.read_text() == "ran\n" * 2  # each candidate ran once, in the run
    [run_dir] = (tmp_path / "runs").iterdir()
    statuses = {r["sample_id"]: r["status"] for r in read_jsonl(run_dir / "scores.jsonl")}
    assert statuses == {"right": "passed", "wrong": "failed"}
    recorded = events_of(run_dir, "score_exec")
    assert len(recorded) == 2 and {e["data"]["run"]["passed"] for e in recorded} == {True, False}

    rescored = run_cli("score", run_dir, cwd=tmp_path, env=_env())
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr  # scores equal
    assert witness.read_text() == "ran\n" * 2  # and nothing ran again


@pytest.mark.doc(
    "docs/cli.md", "a run it needs that the evidence does not hold makes that score an error."
)
def test_a_run_the_evidence_lacks_is_an_error_never_a_new_run(tmp_path: Path) -> None:
    witness = tmp_path / "witness.txt"
    program = f"open({str(witness)!r}, 'a').write('ran\\n')\ndef add(a, b):\n    return a + b\n"
    state = TaskState(
        model="m", sample_id=1, epoch=1, input="", target=Target("assert add(1, 1) == 2")
    )
    state.output = ModelOutput.from_content("m", program)
    # 60 s, not the default 10: nothing here is about time, and on a loaded machine the
    # two processes of a live run can take seconds to start
    scorer = python_tests(sandbox="local", timeout=60)
    assert anyio.run(scorer, state, state.target).value == CORRECT  # live: it runs
    assert witness.read_text() == "ran\n"
    replay = Replay({}, lambda sha: b"")  # re-scoring a run that recorded no sandbox run
    replay.trial = "t-1"

    async def rescore() -> None:
        with replay_scope(replay):
            await scorer(state, state.target)

    with pytest.raises(ExecNotRecorded, match="re-scoring never runs code"):
        anyio.run(rescore)
    assert witness.read_text() == "ran\n"
