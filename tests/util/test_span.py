"""``span`` and ``subtask`` from ``assay.util`` (Inspect's): a subtask's call and a span's
block are nested in the trial's evidence, their events parented to them, and the run
still verifies."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import EXIT_PASSED
from assay.model import get_model
from assay.scorer import includes
from assay.solver import Generate, TaskState, solver
from assay.util import span, subtask
from tests.helpers import log_events, run_cli

MOCK_ANSWER = "Default output from the mock model"


@subtask
async def look_up(word: str, times: int = 1) -> str:
    """A subtask that asks the model being evaluated."""
    output = await get_model().generate(f"define {word}")
    return output.completion * times


@subtask(name="failing_lookup")
async def broken(word: str) -> str:
    raise ValueError(f"no entry for {word}")


@solver
def research() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with span("gather", type="phase"):
            definition = await look_up("cat", times=2)
            with contextlib.suppress(ValueError):
                await broken("dog")
        state.output.completion = definition
        return state

    return solve


def run_task(tmp_path: Path) -> Path:
    task = Task(
        dataset=[Sample(input="x", target=MOCK_ANSWER)], solver=research(), scorer=includes()
    )
    (result,) = eval(task, model="mock/echo", log_dir=tmp_path)
    assert result.status == "success", result.error
    assert result.path is not None
    return result.path


def test_a_subtask_in_a_span_is_nested_in_the_trials_events(tmp_path: Path) -> None:
    run = run_task(tmp_path)
    events = [e for e in log_events(run) if e["trial"]]
    by_number = {e["n"]: e for e in events}
    begins = [e for e in events if e["type"] == "span_begin"]
    gather, lookup, failing = begins
    assert (gather["data"]["name"], gather["data"]["type"]) == ("gather", "phase")
    assert lookup["data"] == {
        "id": lookup["data"]["id"],
        "name": "look_up",
        "type": "subtask",
        "input": {"word": "cat", "times": 2},
    }
    assert lookup["parent"] == gather["n"] and failing["parent"] == gather["n"]
    (call,) = [e for e in events if e["type"] == "sampling" and "model" in e["data"]]
    assert call["parent"] == lookup["n"]  # the model call the subtask made is inside it
    ends = {e["data"]["name"]: e for e in events if e["type"] == "span_end"}
    assert ends["look_up"]["data"]["result"] == MOCK_ANSWER * 2
    assert ends["look_up"]["parent"] == lookup["n"]
    assert ends["failing_lookup"]["data"]["error"] == "ValueError: no entry for dog"
    assert ends["gather"]["parent"] == gather["n"]
    assert by_number[gather["parent"]]["type"] != "span_begin"  # the span sits in the attempt
    assert run_cli("verify", run).returncode == EXIT_PASSED


def test_show_lists_the_spans(tmp_path: Path) -> None:
    run = run_task(tmp_path)
    proc = run_cli("show", run, "--trial", "1")
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    spans = proc.stdout.split("  spans:\n")[1].splitlines()[:3]
    assert spans == [
        "    phase gather",
        f'        subtask look_up({{"word": "cat", "times": 2}}) → {MOCK_ANSWER * 2}',
        '        subtask failing_lookup({"word": "dog"}): error ValueError: no entry for dog',
    ]


def test_outside_a_trial_they_are_plain_code() -> None:
    @subtask
    async def double(n: int) -> int:
        async with span("inner"):
            return n * 2

    assert anyio.run(double, 4) == 8


def test_a_subtask_must_be_async() -> None:
    with pytest.raises(TypeError, match="@subtask needs an async function"):
        subtask(lambda: 1)  # type: ignore[call-overload]
