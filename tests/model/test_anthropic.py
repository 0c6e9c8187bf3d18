"""The anthropic provider: the real SDK against a Messages-API server of our own on 127.0.0.1.

The server answers scripted replies in order and keeps every request, so the tests see
both what the SDK sent (system split out, tool results, the key header) and how the
provider reads what came back (text, tool_use, usage, stop reason, errors).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

import assay
from assay import Sample, Task, generate, includes
from assay.errors import ConfigError
from assay.evidence import verify_run
from assay.model import (
    GenerateConfig,
    ModelError,
    ToolCall,
    assistant_message,
    get_model,
    system_message,
    tool_message,
    user_message,
)
from assay.target import InfrastructureError
from tests.servers._json import send_json

KEY = "sk-ant-test-never-stored-0123456789"
WEATHER = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


class Messages:
    """Scripted replies (status, headers, body) and the requests that came in."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, str], dict[str, Any]]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def reply(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.replies.append((status, headers, body))

    def next(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[Any, ...]:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            if self.replies:
                return self.replies.pop(0)
        text = f"echo: {request['messages'][-1]['content'][0].get('text', '')}"
        return 200, {}, message([{"type": "text", "text": text}])


def message(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    """A Messages API response body."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-1",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7},
    }


def error(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Messages]]:
    script = Messages()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            sent = {k.lower(): v for k, v in self.headers.items()}
            status, headers, payload = script.next(body, sent)
            send_json(self, status, payload, headers)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def ask(url: str, messages: list[Any], **kwargs: Any) -> Any:
    model = get_model("anthropic/claude-test", base_url=url)

    async def call() -> Any:
        try:
            return await model.api.generate(messages, kwargs.get("tools", []), GenerateConfig())
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    return anyio.run(call)


def test_an_answer_with_the_system_prompt_split_out(server: tuple[str, Messages]) -> None:
    url, script = server
    script.reply(200, message([{"type": "text", "text": "Paris."}]))
    output = ask(url, [system_message("Be brief."), user_message("Capital of France?")])
    assert output.completion == "Paris."
    assert output.stop_reason == "stop"
    assert (output.usage.input_tokens, output.usage.output_tokens) == (11, 7)
    (request,) = script.requests
    assert request["system"] == "Be brief."
    assert request["model"] == "claude-test"
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}
    ]
    assert request["max_tokens"] > 0
    assert any(KEY in value for value in script.headers[0].values())  # sent, as a header


def test_a_tool_use_round_trip(server: tuple[str, Messages]) -> None:
    url, script = server
    call = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}
    script.reply(200, message([{"type": "text", "text": "Checking."}, call], stop="tool_use"))
    script.reply(200, message([{"type": "text", "text": "It is 3 degrees in Oslo."}]))
    question = [user_message("Weather in Oslo?")]
    first = ask(url, question, tools=[WEATHER])
    assert first.stop_reason == "tool_calls"
    (tool_call,) = first.message.tool_calls
    assert (tool_call.id, tool_call.function, tool_call.arguments) == (
        "toolu_1",
        "weather",
        {"city": "Oslo"},
    )
    history = [*question, first.message, tool_message("3 degrees", tool_call.id)]
    second = ask(url, history, tools=[WEATHER])
    assert second.completion == "It is 3 degrees in Oslo."
    sent_tools = script.requests[0]["tools"]
    assert sent_tools == [
        {
            "name": "weather",
            "description": "The weather in a city.",
            "input_schema": WEATHER["parameters"],
        }
    ]
    turns = script.requests[1]["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "weather",
        "input": {"city": "Oslo"},
    }
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 degrees"}
    ]


def test_tool_choice_goes_out_as_anthropic_spells_it(server: tuple[str, Messages]) -> None:
    url, script = server
    model = get_model("anthropic/claude-test", base_url=url)

    async def call(choice: str, tools: list[dict[str, Any]]) -> None:
        config = GenerateConfig(tool_choice=choice)
        await model.api.generate([user_message("Weather?")], tools, config)

    async def calls() -> None:
        try:
            for choice in ("auto", "none", "any", "weather"):
                await call(choice, [WEATHER])
            await call("weather", [])  # no tools: no tool_choice either
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    anyio.run(calls)
    sent = [r.get("tool_choice") for r in script.requests]
    assert sent == [
        {"type": "auto"},
        {"type": "none"},
        {"type": "any"},
        {"type": "tool", "name": "weather"},
        None,
    ]


def test_consecutive_tool_results_are_one_user_turn(server: tuple[str, Messages]) -> None:
    url, script = server
    calls = [ToolCall("a", "weather", {"city": "Oslo"}), ToolCall("b", "weather", {"city": "Rome"})]
    history = [
        user_message("Both?"),
        assistant_message("", calls),
        tool_message("3", "a"),
        tool_message("19", "b"),
    ]
    ask(url, history, tools=[{"type": "function", "function": WEATHER}])
    turns = script.requests[0]["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in turns[2]["content"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("status", "kind", "reason"),
    [(429, "rate_limit_error", "rate_limited"), (529, "overloaded_error", "http_529")],
)
def test_rate_limits_and_overload_are_infrastructure_with_retry_after(
    server: tuple[str, Messages], status: int, kind: str, reason: str
) -> None:
    url, script = server
    script.reply(status, error(kind, "slow down"), **{"retry-after": "7"})
    with pytest.raises(InfrastructureError) as caught:
        ask(url, [user_message("hi")])
    assert caught.value.reason == reason
    assert caught.value.retry_after == 7.0
    assert len(script.requests) == 1, "the SDK must not retry on its own"


def test_a_refused_connection_is_infrastructure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with socket.socket() as probe:  # bound, never listening, held: it refuses
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        with pytest.raises(InfrastructureError) as caught:
            ask(f"http://127.0.0.1:{port}", [user_message("hi")])
    assert caught.value.reason == "connection"


def test_a_bad_request_is_an_error_with_status_and_message_never_the_key(
    server: tuple[str, Messages],
) -> None:
    url, script = server
    script.reply(400, error("invalid_request_error", f"bad field; you sent key {KEY}"))
    with pytest.raises(ModelError) as caught:
        ask(url, [user_message("hi")])
    assert caught.value.status == 400
    assert "invalid_request_error: bad field" in str(caught.value)
    assert KEY not in str(caught.value)
    assert len(script.requests) == 1


def test_no_key_is_a_one_line_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError) as caught:
        get_model("anthropic/claude-test")
    assert "ANTHROPIC_API_KEY" in caught.value.one_line()
    assert "\n" not in caught.value.one_line()


def test_a_key_given_as_a_model_argument_is_refused(server: tuple[str, Messages]) -> None:
    url, _ = server
    with pytest.raises(ConfigError):
        get_model("anthropic/claude-test", base_url=url, api_key=KEY)


def test_an_eval_through_the_provider_never_stores_the_key(
    server: tuple[str, Messages], tmp_path: Path
) -> None:
    url, script = server
    script.reply(200, message([{"type": "text", "text": "The answer is 4."}]))
    script.reply(401, error("authentication_error", f"invalid x-api-key {KEY}"))
    task = Task(
        dataset=[Sample(input="2+2?", target="4", id="a"), Sample(input="3+3?", target="6")],
        solver=[generate()],
        scorer=includes(),
    )
    (result,) = assay.eval(
        task,
        model="anthropic/claude-test",
        model_args={"base_url": url},
        log_dir=tmp_path,
        max_samples=1,
        fail_on_error=False,
    )
    assert result.path is not None
    assert verify_run(result.path).ok
    assert len(script.requests) == 2
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"The answer is 4." in stored or b"answer is 4" in stored
    assert KEY.encode() not in stored
    assert b"authentication_error" in stored  # the refusal is recorded, without the key


PNG_DATA = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def test_images_go_out_as_base64_and_url_image_blocks(
    server: tuple[str, Messages], tmp_path: Path
) -> None:
    import base64

    from assay.model import ContentImage, ContentText

    url, script = server
    picture = tmp_path / "red.png"
    picture.write_bytes(base64.b64decode(PNG_DATA))
    question = user_message(
        [
            ContentText("Colours?"),
            ContentImage(str(picture)),
            ContentImage(f"data:image/png;base64,{PNG_DATA}"),
            ContentImage("https://example.invalid/cat.jpg"),
        ]
    )
    ask(url, [question])
    png = {"type": "base64", "media_type": "image/png", "data": PNG_DATA}
    assert script.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Colours?"},
                {"type": "image", "source": png},
                {"type": "image", "source": png},
                {
                    "type": "image",
                    "source": {"type": "url", "url": "https://example.invalid/cat.jpg"},
                },
            ],
        }
    ]


def test_a_response_schema_is_a_forced_tool_whose_input_is_the_answer(
    server: tuple[str, Messages],
) -> None:
    from assay.model import ResponseSchema

    url, script = server
    schema = ResponseSchema(
        "person", {"type": "object", "properties": {"age": {"type": "integer"}}}
    )
    answer = {"type": "tool_use", "id": "toolu_9", "name": "person", "input": {"age": 41}}
    script.reply(200, message([answer], stop="tool_use"))
    model = get_model("anthropic/claude-test", base_url=url)

    async def call() -> Any:
        try:
            config = GenerateConfig(response_schema=schema)
            return await model.api.generate([user_message("How old?")], [], config)
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    output = anyio.run(call)
    assert json.loads(output.completion) == {"age": 41}
    assert output.message.tool_calls is None and output.stop_reason == "stop"
    (request,) = script.requests
    assert request["tools"] == [
        {
            "name": "person",
            "input_schema": schema.json_schema,
            "description": "Give the answer in this form.",
        }
    ]
    assert request["tool_choice"] == {"type": "tool", "name": "person"}


def test_thinking_is_kept_and_sent_back_with_its_signature(
    server: tuple[str, Messages],
) -> None:
    from assay.model import ContentReasoning, ContentText

    url, script = server
    thought = {"type": "thinking", "thinking": "six sevens", "signature": "sig-1"}
    script.reply(200, message([thought, {"type": "text", "text": "42"}]))
    model = get_model("anthropic/claude-test", base_url=url)
    question = [user_message("6 x 7?")]

    async def calls() -> Any:
        try:
            config = GenerateConfig(reasoning_tokens=1024)
            first = await model.api.generate(question, [], config)
            await model.api.generate([*question, first.message, user_message("sure?")], [], config)
            return first
        finally:
            await model.api.aclose()  # type: ignore[attr-defined]

    first = anyio.run(calls)
    assert first.completion == "42"
    assert first.message.content == [
        ContentReasoning("six sevens", signature="sig-1"),
        ContentText("42"),
    ]
    assert script.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert script.requests[1]["messages"][1]["content"] == [thought, {"type": "text", "text": "42"}]


REASONING_TASK = """
from assay import Sample, Task, generate, includes, task


@task
def sums() -> Task:
    return Task(dataset=[Sample(input="6 x 7?", target="42")], solver=generate(),
                scorer=includes())
"""


@pytest.mark.doc(
    "docs/cli.md",
    "`--reasoning-tokens N` and `--reasoning-summary concise|detailed|auto|none` set those "
    "`GenerateConfig` fields the same way: Anthropic takes `reasoning_tokens` as its thinking "
    "budget, and no provider is sent `reasoning_summary`",
)
def test_reasoning_options_on_the_command_line_reach_anthropic(
    server: tuple[str, Messages], tmp_path: Path
) -> None:
    from tests.helpers import run_cli, run_dirs, write_module

    url, script = server
    script.reply(200, message([{"type": "text", "text": "42"}]))
    write_module(tmp_path, "sums", REASONING_TASK)
    proc = run_cli(
        "run",
        tmp_path / "sums.py",
        "--model",
        "anthropic/claude-test",
        "-M",
        f"base_url={url}",
        "--reasoning-tokens",
        "2048",
        "--reasoning-summary",
        "concise",
        "--log-dir",
        tmp_path / "logs",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (request,) = script.requests
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "summary" not in json.dumps(request)
    (run,) = run_dirs(tmp_path / "logs")
    config = json.loads((run / "spec.json").read_text())["targets"][0]["config"]
    assert (config["reasoning_tokens"], config["reasoning_summary"]) == (2048, "concise")
