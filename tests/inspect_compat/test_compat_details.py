"""What the idiom tests do not pin: the edges of the pieces added for them (a refused
``tool_with`` parameter, eval-level limits applied and recorded, ``for_tool_call`` ids
stable, ``concurrency`` holding its limit)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.errors import ConfigError
from assay.model import ModelOutput
from assay.scorer import includes
from assay.solver import Generate, TaskState, solver
from assay.tool import tool, tool_with
from assay.util import concurrency


@tool
def add():
    async def execute(x: int, y: int):
        """
        Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return x + y

    return execute


def test_tool_with_refuses_a_parameter_the_tool_does_not_have() -> None:
    with pytest.raises(ConfigError, match=r"tool_with\('add'\): 'z' is not one of its parameters"):
        tool_with(add(), parameters={"z": "a third number"})


def test_tool_with_changes_the_copy_only() -> None:
    original = add()
    renamed = tool_with(original, name="plus", parameters={"x": "the left one"})
    assert (original.name, renamed.name) == ("add", "plus")
    assert renamed.schema["parameters"]["properties"]["x"]["description"] == "the left one"
    assert original.schema["parameters"]["properties"]["x"]["description"] == "First number."


def test_for_tool_call_ids_depend_only_on_the_call() -> None:
    first = ModelOutput.for_tool_call(model="m", tool_name="add", tool_arguments={"x": 1, "y": 2})
    again = ModelOutput.for_tool_call(model="m", tool_name="add", tool_arguments={"y": 2, "x": 1})
    other = ModelOutput.for_tool_call(model="m", tool_name="add", tool_arguments={"x": 2, "y": 2})
    assert first.message.tool_calls[0].id == again.message.tool_calls[0].id
    assert first.message.tool_calls[0].id != other.message.tool_calls[0].id


def test_eval_level_limits_win_are_recorded_and_leave_the_task_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chatty.py").write_text(
        "from assay import Task, task\n"
        "from assay.dataset import Sample\n"
        "from assay.model import user_message\n"
        "from assay.scorer import includes\n"
        "from assay.solver import solver\n\n\n"
        "@solver\n"
        "def chat():\n"
        "    async def solve(state, generate):\n"
        "        while True:\n"
        "            state.messages.append(user_message('more'))\n"
        "            state = await generate(state)\n\n"
        "    return solve\n\n\n"
        "@task\n"
        "def chatty():\n"
        "    return Task(dataset=[Sample(input='hi', target='x')], solver=chat(),\n"
        "                scorer=includes(), message_limit=50)\n"
    )
    log = eval("chatty.py@chatty", model="mockllm/model", message_limit=4)[0]
    spec = json.loads((Path(log.location) / "spec.json").read_text())
    assert spec["task"]["limits"] == {"message_limit": 4}
    assert len(log.samples[0].messages) <= 5


def test_concurrency_lets_that_many_in_at_once() -> None:
    inside, most = 0, 0

    async def one() -> None:
        nonlocal inside, most
        async with concurrency("service", 2):
            inside += 1
            most = max(most, inside)
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            inside -= 1

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(one)

    anyio.run(main)
    assert most == 2


def test_cleanup_runs_when_the_solver_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cleaned = []

    @solver
    def broken():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            raise ValueError("boom")

        return solve

    async def cleanup(state: TaskState) -> None:
        cleaned.append(state.sample_id)

    task = Task(
        dataset=[Sample(input="?", target="x", id="s")],
        solver=broken(),
        scorer=includes(),
        cleanup=cleanup,
        fail_on_error=False,
    )
    log = eval(task, model="mockllm/model")[0]
    assert cleaned == ["s"]
    assert "boom" in (log.samples[0].error or "")


def test_tool_def_describes_and_is_taken_where_a_tool_is() -> None:
    from assay.agent import react
    from assay.tool import ToolDef

    async def double(n: int) -> int:
        """
        Double a number.

        Args:
            n: The number.
        """
        return 2 * n

    made = ToolDef(double, description="Twice n.", parameters={"n": "the number to double"})
    assert (made.name, made.description) == ("double", "Twice n.")
    assert made.parameters["properties"]["n"]["description"] == "the number to double"
    assert react(tools=[made]).settings.tools[0].name == "double"


@pytest.mark.parametrize(
    ("option", "why"),
    [
        ("score", "every trial is scored as it ends"),
        ("log_samples", "every sample is kept in the run's evidence"),
    ],
)
def test_eval_refuses_asking_for_less_evidence(option: str, why: str) -> None:
    task = Task(dataset=[Sample(input="?", target="x")], scorer=includes())
    with pytest.raises(ConfigError, match=rf"eval\({option}=False\): {why}"):
        eval(task, model="mockllm/model", **{option: False})
