"""Per-sample sandboxes through a real run: ``Task(sandbox=)``, ``Sample(sandbox=, files=,
setup=)``, ``sandbox()`` in solvers and scorers, the lifecycle in the evidence,
``max_sandboxes`` and ``--no-sandbox-cleanup`` (issue 14, item 1)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay import Sample, Score, Task, accuracy, eval, python_tests, scorer, solver
from assay._slots import retry_wait
from assay.model import ModelOutput
from assay.report._html import _environment as html_environment
from assay.sandbox import LocalSandbox, register_sandbox, sandbox
from tests.helpers import (
    artifact_bytes,
    edit_artifact,
    error_line,
    events_of,
    read_jsonl,
    run_cli,
    run_dirs,
    simple_spec,
    trial_events,
)


@solver
def shell(command: str = "cat data.txt; echo made > out.txt") -> Any:
    """Runs *command* in the sample's sandbox; its stdout becomes the state's metadata."""

    async def solve(state: Any, generate: Any) -> Any:
        result = await sandbox().exec(["bash", "-c", command])
        state.metadata["stdout"] = result.stdout
        return state

    return solve


@scorer(metrics=[accuracy()])
def left_in_sandbox() -> Any:
    """Correct when the solver's output holds the target and out.txt says ``made``."""

    async def score(state: Any, target: Any) -> Score:
        written = await sandbox().read_file("out.txt")
        ok = target.text in state.metadata["stdout"] and written.strip() == "made"
        return Score(value="C" if ok else "I", answer=state.metadata["stdout"])

    return score


def _run(task: Task, tmp_path: Path, **options: Any) -> Path:
    (result,) = eval(task, model="mock/x", log_dir=tmp_path / "runs", **options)
    assert result.error is None, result.error
    return run_dirs(tmp_path / "runs")[-1]


@pytest.mark.doc(
    "docs/evidence.md",
    "A Python task whose samples have sandboxes (see [sandbox.md](sandbox.md)) adds",
    "commands its scorers run are `score_sandbox_exec`",
)
@pytest.mark.parametrize("provider", ["bwrap", "local"])
def test_files_and_setup_are_in_place_before_the_solver_and_scorers_see_the_sandbox(
    tmp_path: Path, provider: str
) -> None:
    samples = [
        Sample(input="a", target="alpha", files={"data.txt": "alpha\n"}, setup="echo set > s"),
        Sample(input="b", target="beta", files={"data.txt": "beta\n"}, setup="echo set > s"),
    ]
    command = "cat data.txt s; echo made > out.txt"
    task = Task(dataset=samples, solver=shell(command), scorer=left_in_sandbox(), sandbox=provider)
    run = _run(task, tmp_path)
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert [s["value"] for s in scores] == [1.0, 1.0]
    for events in trial_events(run).values():
        if not events[0]["trial"]:
            continue
        kinds = [e["type"] for e in events if "sandbox" in e["type"]]
        assert kinds == [
            "sandbox_create",
            "sandbox_files",
            "sandbox_setup",
            "sandbox_exec",
            "score_sandbox_read",
            "score_sandbox_cleanup",
        ]
        created = next(e for e in events if e["type"] == "sandbox_create")
        assert created["data"]["provider"] == provider
        executed = next(e for e in events if e["type"] == "sandbox_exec")["data"]
        assert json.loads(artifact_bytes(run, executed["command"])) == ["bash", "-c", command]
        assert artifact_bytes(run, executed["stdout"]).decode().endswith("set\n")
        assert executed["returncode"] == 0
        setup = next(e for e in events if e["type"] == "sandbox_setup")["data"]
        assert json.loads(artifact_bytes(run, setup["command"]))[-1] == "echo set > s"
    assert run_cli("verify", run).returncode == 0


def test_a_scorers_commands_are_recorded_after_the_bundle(tmp_path: Path) -> None:
    @scorer(metrics=[accuracy()])
    def runs_a_check() -> Any:
        async def score(state: Any, target: Any) -> Score:
            result = await sandbox().exec(["cat", "out.txt"])
            return Score(value="C" if result.stdout == "made\n" else "I")

        return score

    task = Task(
        dataset=[Sample(input="a", files={"data.txt": "x"})],
        solver=shell(),
        scorer=runs_a_check(),
        sandbox="bwrap",
    )
    run = _run(task, tmp_path)
    (checked,) = events_of(run, "score_sandbox_exec")
    assert artifact_bytes(run, checked["data"]["stdout"]) == b"made\n"
    bundle = json.loads((run / "bundles.jsonl").read_text())
    listed = {n for n, _ in bundle["events"]}
    assert checked["n"] not in listed  # what scorers did is not part of the sealed trial
    assert json.loads((run / "scores.jsonl").read_text())["value"] == 1.0


def test_file_contents_may_be_bytes_a_data_uri_or_a_path_beside_the_dataset(
    tmp_path: Path,
) -> None:
    from assay.dataset import MemoryDataset, json_dataset

    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "blob.bin").write_bytes(b"\x00\xffbinary\n")
    record = {
        "input": "x",
        "target": "",
        "files": {
            "from_path.bin": "fixtures/blob.bin",
            "uri.txt": "data:text/plain;base64,aGVsbG8=",
            "inline.txt": "just text",
        },
    }
    dataset_file = tmp_path / "data.jsonl"
    dataset_file.write_text(json.dumps(record) + "\n")
    dataset = json_dataset(dataset_file)
    raw = Sample(input="y", files={"raw.bin": b"\x01\x02\x03"})
    listing = "od -An -c from_path.bin raw.bin 2>/dev/null; cat uri.txt inline.txt"

    both = MemoryDataset([*dataset, raw], location=dataset.location)
    task = Task(
        dataset=both,
        solver=shell(listing + "; echo made > out.txt"),
        scorer=left_in_sandbox(),
        sandbox="bwrap",
    )
    run = _run(task, tmp_path)
    placed: dict[str, bytes] = {}
    for event in events_of(run, "sandbox_files"):
        for path, sha in event["data"]["files"].items():
            placed[path] = artifact_bytes(run, sha)
    assert placed == {
        "from_path.bin": b"\x00\xffbinary\n",
        "uri.txt": b"hello",
        "inline.txt": b"just text",
        "raw.bin": b"\x01\x02\x03",
    }


def test_a_failing_setup_errors_the_sample_and_names_the_script(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="a", setup="echo broken >&2; exit 3")],
        solver=shell(),
        scorer=left_in_sandbox(),
        sandbox="bwrap",
    )
    (result,) = eval(task, model="mock/x", log_dir=tmp_path / "runs")
    assert result.status == "error"
    assert "setup script exited 3" in (result.error or "")
    run = run_dirs(tmp_path / "runs")[-1]
    (setup,) = events_of(run, "sandbox_setup")
    assert setup["data"]["returncode"] == 3
    assert artifact_bytes(run, setup["data"]["stderr"]) == b"broken\n"
    assert not events_of(run, "sandbox_exec")  # the solver never ran


def test_a_samples_own_sandbox_replaces_the_tasks(tmp_path: Path) -> None:
    samples = [Sample(input="a", id="own", sandbox="local"), Sample(input="b", id="task's")]
    task = Task(dataset=samples, solver=shell("echo made > out.txt"), sandbox="bwrap")
    run = _run(task, tmp_path)
    providers = {}
    for events in trial_events(run).values():
        started = events[0]
        if started["type"] != "trial_started":
            continue
        created = next(e for e in events if e["type"] == "sandbox_create")
        providers[started["data"]["sample_id"]] = created["data"]["provider"]
    assert providers == {"own": "local", "task's": "bwrap"}


@pytest.mark.doc(
    "docs/cli.md",
    "| 1 | gate failed, or a Python task's unit ended in error during its run, before it had "
    "a gate (its error is printed) |",
)
def test_sandbox_without_one_declared_stops_the_run_with_one_line(tmp_path: Path) -> None:
    module = tmp_path / "needs.py"
    module.write_text(
        textwrap.dedent(
            """
            from assay import Sample, Task, solver, task
            from assay.sandbox import sandbox

            @solver
            def uses_it():
                async def solve(state, generate):
                    await sandbox().exec(["true"])
                    return state
                return solve

            @task
            def needs():
                return Task(dataset=[Sample(input="x")], solver=uses_it())
            """
        )
    )
    proc = run_cli("run", module, "--model", "mock/x", "-o", tmp_path / "run", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # its run began: ended in error before a gate
    (line,) = proc.stderr.splitlines()  # one line, no traceback
    assert "sandbox() was called, but this sample has no sandbox" in line


def test_an_unknown_provider_is_refused_before_any_trial_runs(tmp_path: Path) -> None:
    module = tmp_path / "unknown.py"
    module.write_text(
        "from assay import Sample, Task, task\n"
        "@task\n"
        "def unknown():\n"
        "    return Task(dataset=[Sample(input='x')], sandbox='dockr')\n"
    )
    proc = run_cli("run", module, "--model", "mock/x", "-o", tmp_path / "run", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # refused before its run: a configuration error
    (line,) = proc.stderr.splitlines()
    assert "no sandbox provider is called 'dockr'" in line
    assert not (tmp_path / "run" / "events.jsonl").exists()


@solver
def yields_a_few_times() -> Any:
    async def solve(state: Any, generate: Any) -> Any:
        for _ in range(20):  # let the other trials in flight run (and create theirs)
            await anyio.lowlevel.checkpoint()
        await sandbox().exec(["true"])
        return state

    return solve


def counting_local_sandbox() -> type[LocalSandbox]:
    """A local sandbox class counting how many of its kind exist at once (made afresh for
    each test, so the registry forgets it afterwards)."""

    class Counted(LocalSandbox):
        live = 0
        peak = 0

        async def create(self) -> None:
            await super().create()
            Counted.live += 1
            Counted.peak = max(Counted.peak, Counted.live)

        async def cleanup(self) -> None:
            if self._folder is not None:
                Counted.live -= 1
            await super().cleanup()

    return Counted


@pytest.mark.doc("docs/cli.md", "at most N samples hold sandboxes at once.")
@pytest.mark.parametrize(("cap", "most"), [(None, 8), (1, 1), (3, 3)])
def test_max_sandboxes_caps_the_samples_holding_sandboxes_at_once(
    tmp_path: Path, cap: int | None, most: int
) -> None:
    counted = counting_local_sandbox()
    register_sandbox("counted", counted)
    samples = [Sample(input=str(i)) for i in range(8)]
    task = Task(dataset=samples, solver=yields_a_few_times(), sandbox="counted")
    _run(task, tmp_path, max_samples=8, max_sandboxes=cap)
    assert counted.peak == most  # uncapped, all 8 trials hold one: the cap is what binds
    assert counted.live == 0


@solver
def waits_to_retry() -> Any:
    async def solve(state: Any, generate: Any) -> Any:
        await sandbox().exec(["true"])
        await retry_wait(0.05)  # as a model call does before its retry
        return state

    return solve


@pytest.mark.doc("docs/cli.md", "a trial holding sandboxes keeps its place")
def test_a_trial_holding_sandboxes_keeps_its_place_while_it_waits_to_retry(
    tmp_path: Path,
) -> None:
    counted = counting_local_sandbox()
    register_sandbox("counted", counted)
    samples = [Sample(input=str(i)) for i in range(8)]
    task = Task(dataset=samples, solver=waits_to_retry(), sandbox="counted")
    _run(task, tmp_path, max_samples=2)
    assert counted.peak == 2  # no trial started in the place of one waiting with a sandbox
    assert counted.live == 0


@solver
def answers_with_the_input() -> Any:
    async def solve(state: Any, generate: Any) -> Any:
        state.output = ModelOutput.from_content(state.model, state.input_text)
        return state

    return solve


# The program waits until TOGETHER programs of the run have started (each leaves a file
# in a shared folder: the local sandbox can reach it), so that many runs surely overlap.
BARRIER_PROGRAM = """
import os, time
open(os.path.join({folder!r}, {name!r}), "w").close()
while len(os.listdir({folder!r})) < {together}:
    time.sleep(0.01)
def add(a, b):
    return a + b
"""


@pytest.mark.doc("docs/sandbox.md", "the two that `python_tests` and `run_python` make")
@pytest.mark.parametrize(
    ("cap", "together", "own", "most"),
    [(None, 8, False, 16), (1, 1, False, 2), (2, 2, False, 4), (1, 1, True, 3)],
)
def test_python_tests_sandboxes_count_against_max_sandboxes(
    tmp_path: Path, cap: int | None, together: int, own: bool, most: int
) -> None:
    """python_tests makes two sandboxes per run (the candidate's, the driver's): they take
    the sample's slot of the cap, so with a cap of N at most 2N exist at once (one more
    each when the sample has a sandbox of its own, which already holds the slot)."""
    counted = counting_local_sandbox()
    register_sandbox("local", counted)  # python_tests(sandbox="local") makes these
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    samples = [
        Sample(
            id=str(i),
            input=BARRIER_PROGRAM.format(folder=str(barrier), name=str(i), together=together),
            target="assert add(2, 3) == 5\n",
        )
        for i in range(8)
    ]
    task = Task(
        dataset=samples,
        solver=answers_with_the_input(),
        scorer=python_tests(sandbox="local", timeout=60.0, max_concurrency=8),
        sandbox="local" if own else None,
    )
    run = _run(task, tmp_path, max_samples=8, max_sandboxes=cap)
    statuses = {r["status"] for r in read_jsonl(run / "scores.jsonl")}
    assert statuses == {"passed"}
    assert counted.peak == most
    assert counted.live == 0


@pytest.mark.doc("docs/cli.md", "`--no-sandbox-cleanup` keeps every sample's sandbox after scoring")
def test_no_sandbox_cleanup_keeps_each_sandbox_and_says_where(tmp_path: Path) -> None:
    module = tmp_path / "keep.py"
    module.write_text(
        textwrap.dedent(
            """
            from assay import Sample, Task, solver, task
            from assay.sandbox import sandbox

            @solver
            def writes():
                async def solve(state, generate):
                    await sandbox().exec(["bash", "-c", "echo evidence > left.txt"])
                    return state
                return solve

            @task
            def keep():
                samples = [Sample(input="x", id=1), Sample(input="y", id=2)]
                return Task(dataset=samples, solver=writes(), sandbox="bwrap")
            """
        )
    )
    out = tmp_path / "run"
    proc = run_cli("run", module, "--model", "mock/x", "-o", out, "--no-sandbox-cleanup")
    assert proc.returncode == 0, proc.stderr
    kept = [
        line.rsplit(" kept at ", 1)[1] for line in proc.stderr.splitlines() if "kept at" in line
    ]
    try:
        assert len(kept) == 2
        for folder in kept:
            assert Path(folder, "left.txt").read_text() == "evidence\n"
        recorded = {e["data"]["kept"] for e in events_of(out, "score_sandbox_cleanup")}
        assert recorded == set(kept)
    finally:
        for folder in kept:
            shutil.rmtree(folder, ignore_errors=True)

    again = tmp_path / "again"
    proc = run_cli("run", module, "--model", "mock/x", "-o", again)
    assert "kept at" not in proc.stderr
    assert {e["data"]["kept"] for e in events_of(again, "score_sandbox_cleanup")} == {None}


@pytest.mark.doc("docs/cli.md", "Both are refused for YAML specs (exit 2).")
def test_sandbox_options_are_refused_for_a_yaml_spec(tmp_path: Path) -> None:
    spec = simple_spec(tmp_path)
    for option in ("--max-sandboxes=2", "--no-sandbox-cleanup"):
        proc = run_cli("run", spec, option, "-o", tmp_path / "out")
        assert proc.returncode == 2, proc.stderr
        assert option.split("=")[0] in error_line(proc)


@pytest.mark.doc("docs/evidence.md", "`verify` checks that every artifact they name")
def test_verify_catches_a_changed_sandbox_output(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="a", target="alpha", files={"data.txt": "alpha\n"})],
        solver=shell(),
        scorer=left_in_sandbox(),
        sandbox="bwrap",
    )
    run = _run(task, tmp_path)
    (executed,) = events_of(run, "sandbox_exec")
    edit_artifact(run, executed["data"]["stdout"], lambda b: b.replace(b"alpha", b"omega"))
    proc = run_cli("verify", run)
    assert proc.returncode == 4, proc.stdout + proc.stderr


def test_a_sandboxed_run_leaves_no_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # where sandboxes are made: a folder of its own (the sandbox user, uid 65534, must be
    # able to reach it: not under pytest's root-only tmp_path)
    temp = Path(tempfile.mkdtemp(prefix="assay-test-"))
    temp.chmod(0o755)
    # the report's template cache is Jinja's, made under the temp folder by the first
    # report of this process: made now, so that only sandboxes could be left in *temp*
    html_environment()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    task = Task(
        dataset=[Sample(input=str(i), files={"data.txt": "x"}) for i in range(4)],
        solver=shell(),
        scorer=left_in_sandbox(),
        sandbox="bwrap",
    )
    try:
        run = _run(task, tmp_path)
        assert len(events_of(run, "sandbox_create")) == 4
        assert os.listdir(temp) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_temp_folder_the_sandbox_user_cannot_enter_is_one_line_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))  # where work folders are made
    task = Task(dataset=[Sample(input="x")], solver=shell("true"), sandbox="bwrap")
    (result,) = eval(task, model="mock/x", log_dir=tmp_path / "runs")
    if os.geteuid() != 0:  # the harness is the sandbox's own user: nothing to enter
        assert result.error is None, result.error
        return
    assert result.status == "error"
    assert "the sandbox user (uid 65534) cannot enter" in (result.error or "")
    assert "set TMPDIR to a folder every user can enter" in (result.error or "")
    assert not list((tmp_path / "runs").glob("*/events.jsonl"))  # refused before the run
