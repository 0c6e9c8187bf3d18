"""The event loop a run gets (``assay._event_loop``): uvloop's when it is installed,
asyncio's when ``ASSAY_EVENT_LOOP=asyncio`` asks for it, a one-line usage error (exit 2)
for a value naming neither."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_CONFIG, EXIT_PASSED
from assay.scorer import includes
from assay.solver import Generate, TaskState, solver
from tests.helpers import REPO, run_cli

MOCK_ANSWER = "Default output from the mock model"


@solver
def note_the_loop(seen: list[str]) -> Any:
    """Notes the class of the loop the trial runs on, then asks the model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen.append(type(asyncio.get_running_loop()).__module__.partition(".")[0])
        return await generate(state)

    return solve


def loop_of_a_run(tmp_path: Path) -> str:
    """Run a two-sample task with the mock model; the loop's module (``uvloop``...)."""
    seen: list[str] = []
    dataset = [Sample(input=f"q{i}", target=MOCK_ANSWER) for i in range(2)]
    task = Task(dataset=dataset, solver=note_the_loop(seen), scorer=includes())
    (result,) = eval(task, model="mock/echo", log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.path is not None
    assert run_cli("verify", result.path).returncode == EXIT_PASSED
    assert len(set(seen)) == 1, seen
    return seen[0]


@pytest.mark.doc(
    "docs/cli.md",
    "`ASSAY_EVENT_LOOP` — the event loop a run goes on: `uvloop` (the default; Python's own"
    " when uvloop is not installed, which is a dependency except on Windows) or `asyncio`.",
)
def test_a_run_is_on_uvloop_when_it_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if importlib.util.find_spec("uvloop") is None:  # a core dependency, except on Windows
        pytest.skip("uvloop is not installed")
    monkeypatch.delenv("ASSAY_EVENT_LOOP", raising=False)
    assert loop_of_a_run(tmp_path) == "uvloop"


def test_asyncio_s_loop_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_EVENT_LOOP", "asyncio")
    assert loop_of_a_run(tmp_path) == "asyncio"


@pytest.mark.doc("docs/cli.md", "Another value is one line naming the two (exit 2).")
def test_a_loop_no_one_knows_is_a_usage_error(tmp_path: Path) -> None:
    spec = REPO / "examples" / "shipping" / "eval.yaml"
    proc = run_cli("run", spec, "-o", tmp_path / "run", env={"ASSAY_EVENT_LOOP": "trio"})
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "ASSAY_EVENT_LOOP=trio names no event loop" in line
    assert "uvloop, asyncio" in line
    assert not (tmp_path / "run").exists()  # refused before the run began


class _Loud:
    """A result that counts how often it is written out with ``repr``."""

    def __init__(self) -> None:
        self.reprs = 0

    def __repr__(self) -> str:
        self.reprs += 1
        return "_Loud()"


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_a_blocking_call_does_not_write_its_result_out(
    loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the loop closes, asyncio's runner formats its SIGINT handler, which names the
    main task and so its result: an eval's results took 2-3 ms each time."""
    import signal

    from assay._event_loop import run

    if loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        pytest.skip("uvloop is not installed")
    monkeypatch.setenv("ASSAY_EVENT_LOOP", loop)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # as in a script
    result = _Loud()

    async def answer() -> _Loud:
        return result

    assert run(answer) is result
    assert result.reprs == 0
