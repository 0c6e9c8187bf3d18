"""Chat content beyond text: images (a file, a data URI, a URL) and reasoning, through the
real openai SDK to the OpenAI-compatible server on 127.0.0.1, and in the evidence.

Anthropic's wire format for the same content is tested in ``test_anthropic.py`` (its
server lives there); the local model's refusal in ``test_local.py``."""

from __future__ import annotations

import base64
import html
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from assay.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    Model,
    ModelError,
    ModelOutput,
    ResponseSchema,
    ToolCall,
    get_model,
    user_message,
)
from tests.helpers import artifact_bytes, events_of, run_cli, run_dirs, write_module
from tests.servers.openai_compat import OpenAICompatServer


def png_bytes() -> bytes:
    """A real 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


PNG_URI = "data:image/png;base64," + base64.b64encode(png_bytes()).decode()


def ask(model: Model, *args: Any, **kwargs: Any) -> ModelOutput:
    async def call() -> ModelOutput:
        try:
            return await model.generate(*args, **kwargs)
        finally:
            await model.aclose()

    return anyio.run(call)


def model_on(server: OpenAICompatServer) -> Model:
    return get_model("openai/vision", base_url=server.url)


def test_images_go_out_as_image_url_parts(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    picture = tmp_path / "red.png"
    picture.write_bytes(png_bytes())
    question = user_message(
        [
            ContentText("What colour are these?"),
            ContentImage(str(picture)),
            ContentImage(PNG_URI, detail="low"),
            ContentImage("https://example.invalid/cat.jpg"),
        ]
    )
    ask(model_on(openai_server), [question])
    (seen,) = openai_server.requests
    assert seen.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What colour are these?"},
                {"type": "image_url", "image_url": {"url": PNG_URI}},  # the file, read
                {"type": "image_url", "image_url": {"url": PNG_URI, "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.jpg"}},
            ],
        }
    ]


def test_text_only_parts_go_out_as_text(openai_server: OpenAICompatServer) -> None:
    ask(model_on(openai_server), [user_message([ContentText("one"), ContentText("two")])])
    assert openai_server.requests[0].body["messages"] == [{"role": "user", "content": "one\ntwo"}]


def test_an_unreadable_image_file_is_a_one_line_model_error(
    openai_server: OpenAICompatServer, tmp_path: Path
) -> None:
    missing = tmp_path / "gone.png"
    with pytest.raises(ModelError) as caught:
        ask(model_on(openai_server), [user_message([ContentImage(str(missing))])])
    assert str(missing) in str(caught.value) and "\n" not in str(caught.value)
    assert openai_server.requests == []  # refused before anything was sent


def test_reasoning_content_is_kept_apart_from_the_answer() -> None:
    with OpenAICompatServer(reply=lambda _: "42", reasoning="six times seven") as server:
        output = ask(model_on(server), "what is six times seven?")
    assert output.completion == "42"
    assert output.message.content == [ContentReasoning("six times seven"), ContentText("42")]


def test_message_text_reads_and_replaces_only_the_text_parts() -> None:
    message = user_message([ContentText("a"), ContentImage(PNG_URI), ContentText("b")])
    assert message.text == "a\nb"
    message.text = "c"
    assert message.content == [ContentImage(PNG_URI), ContentText("c")]
    plain = user_message("hello")
    plain.text = "bye"
    assert plain.content == "bye"


def test_content_parts_decode_from_a_dataset_record() -> None:
    record = {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}, {"type": "image", "image": PNG_URI}],
    }
    message = msgspec.convert(record, ChatMessage)
    assert message.content == [ContentText("hi"), ContentImage(PNG_URI)]
    assert msgspec.to_builtins(message) == record


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_a_response_schema_goes_out_as_response_format(
    openai_server: OpenAICompatServer,
) -> None:
    schema = ResponseSchema("person", PERSON, description="Who it is.", strict=True)
    ask(model_on(openai_server), "who?", config=GenerateConfig(response_schema=schema))
    assert openai_server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "person",
            "schema": PERSON,
            "description": "Who it is.",
            "strict": True,
        },
    }


def test_reasoning_effort_goes_out_and_the_options_without_a_wire_field_do_not(
    openai_server: OpenAICompatServer,
) -> None:
    config = GenerateConfig(
        reasoning_effort="low", reasoning_tokens=512, reasoning_summary="concise"
    )
    ask(model_on(openai_server), "think", config=config)
    body = openai_server.requests[0].body
    assert body["reasoning_effort"] == "low"
    assert not {"reasoning_tokens", "reasoning_summary", "reasoning"} & set(body)


TASK = """
from assay import Sample, Task, generate, includes, task
from assay.model import ContentImage, ContentText, ChatMessage


@task
def colours(picture: str) -> Task:
    question = ChatMessage("user", [ContentText("What colour?"), ContentImage(picture)])
    return Task(dataset=[Sample(input=[question], target="red")], solver=generate(),
                scorer=includes())
"""


@pytest.mark.doc(
    "docs/evidence.md",
    "an image a sample gives as a file path is there as a `data:` URI of the file's bytes "
    "(the trial's messages keep the path)",
    "reasoning a model returned is a `reasoning` part of its answer",
)
def test_an_image_sample_runs_and_its_evidence_holds_the_image(tmp_path: Path) -> None:
    picture = tmp_path / "red.png"
    picture.write_bytes(png_bytes())
    write_module(tmp_path, "colours", TASK)
    with OpenAICompatServer(reply=lambda _: "red", reasoning="it looks red") as server:
        proc = run_cli(
            "run",
            f"{tmp_path / 'colours.py'}@colours",
            "-T",
            f"picture={picture}",
            "--model",
            "openai/vision",
            "-M",
            f"base_url={server.url}",
            "--log-dir",
            tmp_path / "logs",
            env={"OPENAI_API_KEY": "sk-test"},
        )
    assert proc.returncode == 0, proc.stderr
    (run,) = run_dirs(tmp_path / "logs")
    (sampling,) = [e for e in events_of(run, "sampling") if "model" in e["data"]]
    prompt = json.loads(artifact_bytes(run, sampling["data"]["prompt"]))
    parts = prompt["messages"][0]["content"]
    assert parts == [
        {"type": "text", "text": "What colour?"},
        {"type": "image", "image": PNG_URI},  # the bytes sent, not the path
    ]
    answer = json.loads(artifact_bytes(run, sampling["data"]["output"]))
    assert answer["message"]["content"] == [
        {"type": "reasoning", "reasoning": "it looks red"},
        {"type": "text", "text": "red"},
    ]
    # the viewer's trial page shows the answer's reasoning and text, not their JSON
    from tests.view._support import served

    trial = events_of(run, "trial_started")[0]["trial"]
    with served(tmp_path / "logs") as client:
        page = client.get(f"/runs/{run.name}/trials/{trial}")
    assert page.status_code == 200
    assert "[reasoning: it looks red]" in page.text
    assert '"type": "reasoning"' not in html.unescape(page.text)  # no raw JSON parts
    # the trial's messages hold the image as the sample gave it (a path), shown as such
    for how in (["1"], ["--trial", "1"]):  # the sample's trials, then its transcript
        shown = run_cli("show", run, *how)
        assert shown.returncode == 0, shown.stderr
        assert re.search(
            rf"user: What colour\?\n +\[image: {re.escape(str(picture))}\]", shown.stdout
        )


def test_inspect_s_message_classes_build_chat_messages() -> None:
    question = ChatMessageUser(content=[ContentText(text="hi"), ContentImage(image=PNG_URI)])
    assert question == ChatMessage("user", [ContentText("hi"), ContentImage(PNG_URI)])
    assert isinstance(question, ChatMessageUser) and not isinstance(question, ChatMessageSystem)
    call = ToolCall("c1", "lookup", {"text": "x"})
    answer = ChatMessageAssistant(content="", tool_calls=[call], model="m")
    assert (answer.role, answer.tool_calls) == ("assistant", [call])
    result = ChatMessageTool(content="42", tool_call_id="c1", function="lookup")
    assert (result.role, result.tool_call_id) == ("tool", "c1")
    assert ChatMessageSystem(content="Be brief.").role == "system"
    with pytest.raises(TypeError, match="colour"):
        ChatMessageUser(content="hi", colour="red")


def test_the_mock_model_takes_images_and_counts_only_words(tmp_path: Path) -> None:
    question = ChatMessageUser(content=[ContentText("two words"), ContentImage(PNG_URI)])
    output = ask(get_model("mock/m", outputs=["red"]), [question])
    assert output.completion == "red"
    assert output.usage.input_tokens == 2


def test_content_parts_are_shown_as_text_with_images_summarised() -> None:
    from assay.model._content import shown_content

    parts = msgspec.to_builtins(
        [ContentReasoning("hmm"), ContentText("red"), ContentImage(PNG_URI), ContentImage("a.png")]
    )
    size = len(png_bytes())
    assert (
        shown_content(parts)
        == f"[reasoning: hmm]\nred\n[image: image/png, {size} bytes]\n[image: a.png]"
    )
    assert shown_content("plain") == "plain"


DICT_TASK = """
from assay import Sample, Task, generate, includes, task


@task
def colours() -> Task:
    parts = [{"type": "text", "text": "What colour?"}, {"type": "image", "image": %r}]
    return Task(dataset=[Sample(input=[{"role": "user", "content": parts}], target="red")],
                solver=generate(), scorer=includes())
"""


def test_a_sample_whose_input_holds_an_image_runs_on_the_mock(tmp_path: Path) -> None:
    """Once ``Expected `str`, got `array` `` (the trial errored): parts as plain dicts, as a
    dataset file gives them, are chat content."""
    write_module(tmp_path, "colours", DICT_TASK % PNG_URI)
    proc = run_cli(
        "run",
        f"{tmp_path / 'colours.py'}@colours",
        "--model",
        "mock/m",
        "-M",
        "default_output=red",
        "--log-dir",
        tmp_path / "logs",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "includes: 1/1" in proc.stdout


class Person(msgspec.Struct):
    name: str
    age: int


def test_json_schema_of_a_type_is_the_schema_a_response_schema_sends(
    openai_server: OpenAICompatServer,
) -> None:
    from pydantic import BaseModel

    from assay.util import json_schema

    class City(BaseModel):
        city: str

    assert json_schema(City) == City.model_json_schema()
    schema = json_schema(Person)  # msgspec's reference to one definition, made that definition
    assert schema["properties"] == {"name": {"type": "string"}, "age": {"type": "integer"}}
    assert schema["required"] == ["name", "age"] and "$ref" not in schema
    config = GenerateConfig(response_schema=ResponseSchema(name="person", json_schema=schema))
    ask(model_on(openai_server), "who?", config=config)
    sent = openai_server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert sent == schema


JSON_TASK = """
from pathlib import Path

from assay import Task, generate, includes, task
from assay.dataset import json_dataset


@task
def colours() -> Task:
    data = Path(__file__).parent / "data" / "colours.jsonl"
    return Task(dataset=json_dataset(str(data)), solver=generate(), scorer=includes())
"""


def test_a_relative_image_path_is_read_from_the_dataset_s_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "images").mkdir(parents=True)
    (tmp_path / "data" / "images" / "red.png").write_bytes(png_bytes())
    parts = [{"type": "text", "text": "What colour?"}, {"type": "image", "image": "images/red.png"}]
    row = {"input": [{"role": "user", "content": parts}], "target": "red"}
    (tmp_path / "data" / "colours.jsonl").write_text(json.dumps(row) + "\n")
    write_module(tmp_path, "colours", JSON_TASK)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with OpenAICompatServer(reply=lambda _: "red") as server:
        proc = run_cli(
            "run",
            tmp_path / "colours.py",
            "--model",
            "openai/vision",
            "--model-base-url",
            server.url,
            "--log-dir",
            tmp_path / "logs",
            cwd=elsewhere,  # not where the images are
            env={"OPENAI_API_KEY": "sk-test"},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (seen,) = server.requests
    assert seen.body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": PNG_URI},
    }
