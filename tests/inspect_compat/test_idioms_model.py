"""Held-out Inspect idioms, models and messages: each test is written as Inspect's
documentation shows it, with ``inspect_ai`` changed to ``assay``; the model is
Inspect's ``mockllm``."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest

from assay import Task, eval
from assay.dataset import Sample
from assay.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from assay.scorer import includes, model_graded_qa
from assay.solver import Generate, TaskState, solver


def say(text: str) -> ModelOutput:
    return ModelOutput.from_content(model="mockllm/model", content=text)


def test_get_model_and_generate_text() -> None:
    async def main() -> str:
        model = get_model("mockllm/model", custom_outputs=[say("Paris")])
        output = await model.generate("What is the capital of France?")
        return output.completion

    assert anyio.run(main) == "Paris"


def test_generate_chat_messages() -> None:
    async def main() -> ModelOutput:
        model = get_model("mockllm/model", custom_outputs=[say("Hi!")])
        return await model.generate(
            [ChatMessageSystem(content="You are terse."), ChatMessageUser(content="Hello")]
        )

    output = anyio.run(main)
    assert output.message.role == "assistant" and output.message.text == "Hi!"


def test_generate_with_config() -> None:
    async def main() -> str:
        model = get_model("mockllm/model")
        output = await model.generate("Hi", config=GenerateConfig(temperature=0.0, max_tokens=50))
        return output.completion

    assert anyio.run(main) == "Default output from mockllm/model"


def test_get_model_with_config() -> None:
    model = get_model("mockllm/model", config=GenerateConfig(temperature=0.7, seed=42))
    assert model.config.temperature == 0.7 and model.config.seed == 42


def test_model_name() -> None:
    model = get_model("mockllm/model")
    assert str(model) == "mockllm/model"


def test_output_fields() -> None:
    async def main() -> ModelOutput:
        return await get_model("mockllm/model", custom_outputs=[say("x")]).generate("Hi")

    output = anyio.run(main)
    assert output.stop_reason == "stop"
    assert output.choices[0].message.text == "x"
    assert output.usage is not None


def test_generate_config_fields() -> None:
    config = GenerateConfig(
        temperature=0.2,
        top_p=0.9,
        max_tokens=256,
        seed=1,
        stop_seqs=["\n\n"],
        max_connections=4,
        timeout=60,
        max_retries=3,
    )
    assert config.max_tokens == 256 and config.timeout == 60


def test_generate_config_merge() -> None:
    config = GenerateConfig(temperature=0.2).merge(GenerateConfig(max_tokens=10))
    assert (config.temperature, config.max_tokens) == (0.2, 10)


def test_task_config() -> None:
    task = Task(
        dataset=[Sample(input="Hi", target="Default")],
        scorer=includes(),
        config=GenerateConfig(temperature=0.5, max_tokens=100),
    )
    log = eval(task, model="mockllm/model")[0]
    assert log.status == "success"


def test_generate_in_a_solver_with_config_kwargs() -> None:
    @solver
    def short():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return await generate(state, max_tokens=10, temperature=0.0)

        return solve

    task = Task(dataset=[Sample(input="Hi", target="Default")], solver=short(), scorer=includes())
    assert eval(task, model="mockllm/model")[0].status == "success"


def test_chat_message_classes() -> None:
    system = ChatMessageSystem(content="Be brief.")
    user = ChatMessageUser(content="Hi")
    assistant = ChatMessageAssistant(content="Hello")
    tool = ChatMessageTool(content="42", tool_call_id="call_1", function="add")
    assert [m.role for m in (system, user, assistant, tool)] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert isinstance(user, ChatMessageUser) and user.text == "Hi"


def test_content_list_text() -> None:
    message = ChatMessageUser(content=[ContentText(text="Look: "), ContentText(text="twice")])
    assert message.text == "Look: \ntwice" or message.text == "Look: twice"


def test_image_in_a_sample(tmp_path: Path) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
    )
    (tmp_path / "dot.png").write_bytes(png)
    sample = Sample(
        input=[
            ChatMessageUser(
                content=[ContentText(text="What is this?"), ContentImage(image="dot.png")]
            )
        ],
        target="Default",
    )
    log = eval(Task(dataset=[sample], scorer=includes()), model="mockllm/model")[0]
    assert log.status == "success"


def test_model_roles_on_task_and_get_model_role() -> None:
    seen = {}

    @solver
    def ask_critic():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            critic = get_model(role="critic")
            seen["critic"] = (await critic.generate("Judge this")).completion
            return await generate(state)

        return solve

    task = Task(
        dataset=[Sample(input="Hi", target="Default")],
        solver=ask_critic(),
        scorer=includes(),
        model_roles={"critic": get_model("mockllm/model", custom_outputs=[say("fine")])},
    )
    eval(task, model="mockllm/model")
    assert seen["critic"] == "fine"


def test_get_model_role_default() -> None:
    model = get_model(role="grader", default="mockllm/model")
    assert "mockllm" in str(model.name) or "mockllm" in str(model)


def test_grader_role_on_eval() -> None:
    task = Task(
        dataset=[Sample(input="2+2?", target="4")],
        scorer=model_graded_qa(model_role="grader"),
    )
    grader = get_model("mockllm/model", custom_outputs=[say("GRADE: C")])
    log = eval(task, model="mockllm/model", model_roles={"grader": grader})[0]
    assert log.results.scores[0].metrics["accuracy"].value == 1.0


def test_model_output_for_tool_call() -> None:
    output = ModelOutput.for_tool_call(
        model="mockllm/model", tool_name="add", tool_arguments={"x": 1, "y": 2}
    )
    call = output.message.tool_calls[0]
    assert (call.function, call.arguments) == ("add", {"x": 1, "y": 2})


def test_response_schema_config() -> None:
    from pydantic import BaseModel

    from assay.model import ResponseSchema
    from assay.util import json_schema

    class Color(BaseModel):
        red: int
        green: int
        blue: int

    config = GenerateConfig(
        response_schema=ResponseSchema(name="color", json_schema=json_schema(Color))
    )
    assert config.response_schema.name == "color"


def test_mockllm_custom_outputs_as_a_function() -> None:
    def outputs(input, tools, tool_choice, config) -> ModelOutput:
        return say(f"{len(input)} messages")

    async def main() -> str:
        model = get_model("mockllm/model", custom_outputs=outputs)
        return (await model.generate("Hi")).completion

    assert anyio.run(main) == "1 messages"


def test_content_reasoning_in_output() -> None:
    from assay.model import ContentReasoning

    message = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="Think."), ContentText(text="Done.")]
    )
    assert message.text == "Done."


def test_generate_cache_true(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.solver import generate

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))

    def run(answer: str) -> str:
        task = Task(
            dataset=[Sample(input="Hi", target="x")],
            solver=[generate(cache=True)],
            scorer=includes(),
        )
        model = get_model("mockllm/model", custom_outputs=[say(answer)])
        return eval(task, model=model)[0].samples[0].output.completion

    assert run("first") == "first"
    assert run("second") == "first"  # answered from the cache
