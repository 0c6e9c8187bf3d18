"""The google provider: the real ``google-genai`` SDK against a server of our own on
127.0.0.1 speaking Gemini's REST format (``tests/servers/gemini.py``): what the SDK sent
(system instruction, generation config, function declarations, images, the key header)
and how the provider reads what came back (text, function calls, usage, errors)."""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay.errors import EXIT_CONFIG, EXIT_PASSED, ConfigError
from assay.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ModelError,
    ModelOutput,
    ToolCall,
    assistant_message,
    get_model,
    system_message,
    tool_message,
    user_message,
)
from assay.target import InfrastructureError
from tests.helpers import error_line, run_cli, run_dirs, write_module
from tests.servers.gemini import GeminiServer, answer, error_body

KEY = "gk-test-never-stored-0123456789"
WEATHER = {
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiServer]:
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    with GeminiServer() as server:
        yield server


def spelled(fields: dict[str, Any], camel: str) -> Any:
    """A field the SDK may send in camel or snake case (Gemini's proto3 JSON reads both:
    google-genai 3.6 spells some nested fields ``mime_type``, ``thinking_budget``)."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return fields[camel] if camel in fields else fields[snake]


def ask(model: Model, messages: list[ChatMessage], **kwargs: Any) -> ModelOutput:
    async def call() -> ModelOutput:
        try:
            return await model.generate(messages, **kwargs)
        finally:
            await model.aclose()

    return anyio.run(call)


def model_on(server: GeminiServer, **config: Any) -> Model:
    return get_model("google/gemini-test", GenerateConfig(**config), base_url=server.url)


def test_an_answer_with_the_system_instruction_and_usage(gemini: GeminiServer) -> None:
    config = {"temperature": 0.5, "max_tokens": 20, "top_k": 3, "stop": ["END"], "seed": 7}
    output = ask(model_on(gemini, **config), [system_message("Be brief."), user_message("hi")])
    assert output.completion == "echo: hi"
    assert (output.usage.input_tokens, output.usage.output_tokens) == (9, 4)
    assert (output.model, output.stop_reason) == ("gemini-test-001", "stop")
    (seen,) = gemini.requests
    assert seen.path.split("?")[0].endswith("/models/gemini-test:generateContent")
    assert seen.headers["x-goog-api-key"] == KEY
    assert seen.body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert seen.body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    sent = seen.body["generationConfig"]
    assert (sent["temperature"], sent["maxOutputTokens"], sent["topK"]) == (0.5, 20, 3)
    assert (sent["stopSequences"], sent["seed"]) == (["END"], 7)


def test_a_function_call_round_trip(gemini: GeminiServer) -> None:
    model = model_on(gemini)
    first = ask(model, [user_message("Weather in Paris?")], tools=[WEATHER])
    (call,) = first.message.tool_calls or []
    assert (call.function, call.arguments, first.stop_reason) == (
        "weather",
        {"city": "Paris"},
        "tool_calls",
    )
    declared = gemini.requests[0].body["tools"][0]["functionDeclarations"][0]
    assert (declared["name"], spelled(declared, "parametersJsonSchema")) == (
        "weather",
        WEATHER["parameters"],
    )
    history = [
        user_message("Weather in Paris?"),
        assistant_message("", tool_calls=[ToolCall(call.id, "weather", {"city": "Paris"})]),
        tool_message("sunny", tool_call_id=call.id),
    ]
    second = ask(model, history, tools=[WEATHER], config=GenerateConfig(tool_choice="none"))
    assert second.completion == "echo: "
    body = gemini.requests[1].body
    assert body["contents"][1]["role"] == "model"
    assert body["contents"][1]["parts"] == [
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}}
    ]
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "weather", "response": {"content": "sunny"}}}
    ]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


def test_an_image_goes_out_as_inline_data(gemini: GeminiServer, tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PIXEL)
    question = ChatMessage(
        "user", [ContentText("Colour?"), ContentImage(str(tmp_path / "dot.png"))]
    )
    ask(model_on(gemini), [question])
    parts = gemini.requests[0].body["contents"][0]["parts"]
    assert parts[0] == {"text": "Colour?"}
    image = parts[1]["inlineData"]
    assert (spelled(image, "mimeType"), image["data"]) == (
        "image/png",
        base64.b64encode(PIXEL).decode(),
    )


def test_several_candidates_are_the_choices(gemini: GeminiServer) -> None:
    output = ask(model_on(gemini, num_choices=2), [user_message("hi")])
    assert gemini.requests[0].body["generationConfig"]["candidateCount"] == 2
    assert [c.message.text for c in output.choices] == ["echo: hi", "echo: hi"]


def test_thoughts_are_kept_as_reasoning(gemini: GeminiServer) -> None:
    gemini.reply(200, answer([{"text": "let me see", "thought": True}, {"text": "42"}]))
    output = ask(model_on(gemini, reasoning_tokens=256), [user_message("6 x 7?")])
    assert output.completion == "42"
    assert [p.reasoning for p in output.message.content if hasattr(p, "reasoning")] == [
        "let me see"
    ]
    thinking = gemini.requests[0].body["generationConfig"]["thinkingConfig"]
    assert spelled(thinking, "thinkingBudget") == 256


def test_a_response_schema_asks_for_json(gemini: GeminiServer) -> None:
    from assay.model import ResponseSchema

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    ask(model_on(gemini, response_schema=ResponseSchema("city", schema)), [user_message("x")])
    sent = gemini.requests[0].body["generationConfig"]
    assert (sent["responseMimeType"], sent["responseJsonSchema"]) == ("application/json", schema)


@pytest.mark.parametrize(
    ("code", "status", "reason"),
    [(429, "RESOURCE_EXHAUSTED", "rate_limited"), (500, "INTERNAL", "http_500")],
)
def test_rate_limits_and_server_errors_are_infrastructure(
    gemini: GeminiServer, code: int, status: str, reason: str
) -> None:
    gemini.reply(code, error_body(code, status), retry_after="3")
    with pytest.raises(InfrastructureError) as caught:
        ask(model_on(gemini, max_retries=0), [user_message("hi")])
    assert (caught.value.reason, caught.value.status) == (reason, code)
    if code == 429:
        assert caught.value.retry_after == 3.0


def test_a_rate_limit_is_retried_by_the_model_and_the_call_succeeds(gemini: GeminiServer) -> None:
    gemini.reply(429, error_body(429, "RESOURCE_EXHAUSTED"), retry_after="0")
    output = ask(model_on(gemini, max_retries=2), [user_message("again")])
    assert output.completion == "echo: again"
    assert len(gemini.requests) == 2  # the SDK did not retry on its own


def test_a_bad_request_is_an_error_never_showing_the_key(gemini: GeminiServer) -> None:
    gemini.reply(400, error_body(400, "INVALID_ARGUMENT", f"bad key {KEY}"))
    with pytest.raises(ModelError) as caught:
        ask(model_on(gemini), [user_message("hi")])
    assert caught.value.status == 400
    assert "INVALID_ARGUMENT" in str(caught.value)
    assert KEY not in str(caught.value)


def test_a_refused_connection_is_infrastructure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    model = get_model("google/g", GenerateConfig(max_retries=0), base_url="http://127.0.0.1:9")
    with pytest.raises(InfrastructureError) as caught:
        ask(model, [user_message("hi")])
    assert caught.value.reason == "connection"


def test_settings_gemini_has_no_field_for_are_refused(gemini: GeminiServer) -> None:
    with pytest.raises(ConfigError, match="does not take logit_bias"):
        model_on(gemini, logit_bias={"42": 1.0})
    with pytest.raises(ModelError, match="does not take best_of"):
        ask(model_on(gemini), [user_message("hi")], config=GenerateConfig(best_of=2))
    assert gemini.requests == []


def test_no_key_is_a_one_line_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="GOOGLE_API_KEY environment variable is not set"):
        get_model("google/gemini-test")


TASK = """
from assay import Sample, Task, generate, includes, task


@task
def hello() -> Task:
    return Task(dataset=[Sample(input="hi", target="echo")], solver=generate(),
                scorer=includes())
"""


def test_a_run_on_gemini_verifies_and_never_stores_the_key(
    gemini: GeminiServer, tmp_path: Path
) -> None:
    write_module(tmp_path, "hello", TASK)
    proc = run_cli(
        *("run", tmp_path / "hello.py", "--model", "google/gemini-test"),
        *("--model-base-url", gemini.url, "--log-dir", tmp_path / "logs"),
        env={"GOOGLE_API_KEY": KEY},
    )
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    (run,) = run_dirs(tmp_path / "logs")
    assert run_cli("verify", run).returncode == EXIT_PASSED
    for path in run.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert json.loads((run / "spec.json").read_text())["targets"][0]["model"] == (
        "google/gemini-test"
    )


def sys_path() -> str:
    return os.environ.get("PYTHONPATH", "")


def test_without_the_extra_the_error_says_what_to_install(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "google"  # a `google` package without `genai` in it
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    write_module(tmp_path, "hello", TASK)
    proc = run_cli(
        *("run", tmp_path / "hello.py", "--model", "google/gemini-test"),
        *("--log-dir", tmp_path / "logs"),
        env={"GOOGLE_API_KEY": KEY, "PYTHONPATH": f"{tmp_path / 'shadow'}:{sys_path()}"},
    )
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    line = error_line(proc)
    assert "needs the 'google-genai' package" in line
    assert "pip install 'assay[google]'" in line
