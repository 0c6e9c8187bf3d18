"""Held-out Inspect idioms, a last handful: generate's tool_calls, sample files in the
sandbox, a scorer calling another, task setup and cleanup, and run statistics."""

from __future__ import annotations

from pathlib import Path

from assay import Task, eval
from assay.dataset import Sample
from assay.model import ModelOutput, get_model
from assay.scorer import CORRECT, INCORRECT, Score, Target, accuracy, includes, match, scorer
from assay.solver import Generate, TaskState, generate, solver, use_tools
from assay.tool import tool


@tool
def echo():
    async def execute(text: str):
        """
        Echo text back.

        Args:
            text: The text.
        """
        return text

    return execute


def test_generate_tool_calls_none() -> None:
    call = ModelOutput.for_tool_call(
        model="mockllm/model", tool_name="echo", tool_arguments={"text": "x"}
    )
    task = Task(
        dataset=[Sample(input="?", target="A")],
        solver=[use_tools(echo()), generate(tool_calls="none")],
        scorer=includes(),
    )
    log = eval(task, model=get_model("mockllm/model", custom_outputs=[call]))[0]
    assert [m.role for m in log.samples[0].messages] == ["user", "assistant"]


def test_sample_files_in_the_sandbox() -> None:
    from assay.util import sandbox

    @solver
    def read_it():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.output.completion = await sandbox().read_file("data.txt")
            return state

        return solve

    task = Task(
        dataset=[Sample(input="?", target="secret", files={"data.txt": "secret"})],
        solver=read_it(),
        scorer=includes(),
        sandbox="local",
    )
    log = eval(task, model="mockllm/model")[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_a_scorer_calling_another() -> None:
    @scorer(metrics=[accuracy()])
    def strict_match():
        base = match()

        async def score(state: TaskState, target: Target) -> Score:
            result = await base(state, target)
            return Score(value=CORRECT if result.value == CORRECT else INCORRECT)

        return score

    task = Task(dataset=[Sample(input="?", target="model")], scorer=strict_match())
    log = eval(task, model="mockllm/model")[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_task_setup_solver() -> None:
    @solver
    def mark():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.metadata["setup"] = True
            return state

        return solve

    task = Task(
        dataset=[Sample(input="?", target="model")],
        setup=mark(),
        solver=generate(),
        scorer=includes(),
    )
    assert eval(task, model="mockllm/model")[0].status == "success"


def test_output_usage_tokens() -> None:
    import anyio

    async def main():
        return await get_model("mockllm/model").generate("one two three")

    output = anyio.run(main)
    assert output.usage.input_tokens >= 0 and output.usage.output_tokens >= 0
    assert output.usage.total_tokens == output.usage.input_tokens + output.usage.output_tokens


def test_log_stats_model_usage() -> None:
    task = Task(dataset=[Sample(input="?", target="model")], scorer=includes())
    log = eval(task, model="mockllm/model")[0]
    assert "mockllm/model" in log.stats.model_usage


def test_solver_adds_a_tool_to_state() -> None:
    @solver
    def add_echo():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.tools.append(echo())
            return await generate(state)

        return solve

    outputs = [
        ModelOutput.for_tool_call(
            model="mockllm/model", tool_name="echo", tool_arguments={"text": "hey"}
        ),
        ModelOutput.from_content(model="mockllm/model", content="hey"),
    ]
    task = Task(dataset=[Sample(input="?", target="hey")], solver=add_echo(), scorer=includes())
    log = eval(task, model=get_model("mockllm/model", custom_outputs=outputs))[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_task_cleanup() -> None:
    cleaned = []

    async def cleanup(state: TaskState) -> None:
        cleaned.append(state.sample_id)

    task = Task(
        dataset=[Sample(input="?", target="model", id="s")], scorer=includes(), cleanup=cleanup
    )
    eval(task, model="mockllm/model")
    assert cleaned == ["s"]


def test_assistant_message_solver() -> None:
    from assay.solver import assistant_message

    task = Task(
        dataset=[Sample(input="2+2?", target="model")],
        solver=[assistant_message("Let me think."), generate()],
        scorer=includes(),
    )
    log = eval(task, model="mockllm/model")[0]
    assert [m.role for m in log.samples[0].messages] == ["user", "assistant", "assistant"]


def test_var_metric() -> None:
    from assay.scorer import mean, var

    @scorer(metrics=[mean(), var()])
    def length():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=len(state.input_text))

        return score

    task = Task(dataset=[Sample(input="ab"), Sample(input="abcd")], scorer=length())
    log = eval(task, model="mockllm/model")[0]
    assert log.results.scores[0].metrics["var"].value == 2.0


def test_util_subprocess() -> None:
    import anyio

    from assay.util import subprocess

    result = anyio.run(subprocess, ["python3", "-c", "print('out')"])
    assert result.success and result.stdout == "out\n"


def test_util_collect() -> None:
    import anyio

    from assay.util import collect

    async def double(n: int) -> int:
        await anyio.lowlevel.checkpoint()
        return 2 * n

    async def main() -> list[int]:
        return await collect(double(1), double(2), double(3))

    assert anyio.run(main) == [2, 4, 6]


def test_util_resource(tmp_path: Path) -> None:
    from assay.util import resource

    (tmp_path / "prompt.txt").write_text("Answer: {prompt}")
    assert resource("prompt.txt") == "Answer: {prompt}"
    assert resource("Inline {prompt}") == "Inline {prompt}"


def test_inspect_type_names() -> None:
    from assay.scorer import Value, ValueToFloat  # noqa: F401
    from assay.solver import Choices  # noqa: F401
    from assay.tool import ContentText, ToolCall, ToolCallError, ToolResult  # noqa: F401

    assert ToolCall(id="c1", function="add", arguments={"x": 1}).function == "add"
    assert ContentText(text="hi").text == "hi"
