"""The ``openai`` provider against a real OpenAI-compatible server on 127.0.0.1, through
the real openai SDK: answers, usage, tool calls both ways, logprobs, keys and the
errors that must not be retried."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from assay.errors import ConfigError
from assay.model import (
    GenerateConfig,
    Model,
    ModelError,
    ModelOutput,
    assistant_message,
    get_model,
    tool_message,
    user_message,
)
from tests.servers.openai_compat import OpenAICompatServer, status

LOOKUP = {
    "name": "lookup",
    "description": "Look a word up.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def ask(model: Model, *args: Any, **kwargs: Any) -> ModelOutput:
    async def call() -> ModelOutput:
        try:
            return await model.generate(*args, **kwargs)
        finally:
            await model.aclose()

    return anyio.run(call)


def model_on(server: OpenAICompatServer, name: str = "tiny", **config: Any) -> Model:
    return get_model(f"openai/{name}", GenerateConfig(**config), base_url=server.url)


def test_an_answer_with_its_usage(openai_server: OpenAICompatServer) -> None:
    output = ask(model_on(openai_server), "how are you today")
    assert output.completion == "echo: how are you today"
    assert output.stop_reason == "stop"
    # the server counts words: 4 in; "echo:" and the same 4 out
    assert (output.usage.input_tokens, output.usage.output_tokens) == (4, 5)
    (seen,) = openai_server.requests
    assert seen.body["model"] == "tiny"
    assert seen.body["messages"] == [{"role": "user", "content": "how are you today"}]


def test_generation_settings_reach_the_server(openai_server: OpenAICompatServer) -> None:
    config = GenerateConfig(temperature=0.0, top_p=0.5, max_tokens=7, stop=["\n"], seed=3)
    ask(model_on(openai_server), "hi", config=config)
    body = openai_server.requests[0].body
    assert {k: body[k] for k in ("temperature", "top_p", "max_tokens", "stop", "seed")} == {
        "temperature": 0.0,
        "top_p": 0.5,
        "max_tokens": 7,
        "stop": ["\n"],
        "seed": 3,
    }
    assert "logprobs" not in body and "tools" not in body


def test_models_with_configs_in_turn_each_send_their_own(
    openai_server: OpenAICompatServer,
) -> None:
    # the wire remembers the last config it read (a model's own, the same object on
    # every call without one): another model's in between, and a call's own, must still
    # be sent as they are
    hot, cold = model_on(openai_server, temperature=1.0, seed=1), model_on(openai_server, top_p=0.5)
    for model in (hot, hot, cold, hot):
        ask(model, "hi")
    ask(hot, "hi", config=GenerateConfig(max_tokens=3))
    sent = [
        {k: v for k, v in r.body.items() if k not in ("model", "messages")}
        for r in openai_server.requests
    ]
    assert sent == [
        {"temperature": 1.0, "seed": 1},
        {"temperature": 1.0, "seed": 1},
        {"top_p": 0.5},
        {"temperature": 1.0, "seed": 1},
        {"temperature": 1.0, "seed": 1, "max_tokens": 3},
    ]


def test_tool_calls_round_trip(openai_server: OpenAICompatServer) -> None:
    model = model_on(openai_server)
    first = ask(model, "define zebra", tools=[LOOKUP])
    assert first.stop_reason == "tool_calls"
    (call,) = first.message.tool_calls or []
    assert (call.function, call.arguments) == ("lookup", {"text": "define zebra"})
    # the tool's answer goes back with the call's id; the model then answers in text
    conversation = [
        user_message("define zebra"),
        first.message,
        tool_message("a striped horse", call.id),
    ]
    second = ask(model, conversation, tools=[LOOKUP])
    assert second.completion == "the tool said: a striped horse"
    sent = openai_server.requests[1].body
    assert sent["tools"] == [{"type": "function", "function": LOOKUP}]
    assistant, tool = sent["messages"][1:]
    assert assistant["content"] is None
    assert assistant["tool_calls"][0]["id"] == call.id
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == call.arguments
    assert tool == {"role": "tool", "content": "a striped horse", "tool_call_id": call.id}


def test_openai_style_tool_schemas_pass_through(openai_server: OpenAICompatServer) -> None:
    schema = {"type": "function", "function": LOOKUP}
    ask(model_on(openai_server), "x", tools=[schema])
    assert openai_server.requests[0].body["tools"] == [schema]


def test_an_assistant_message_without_tools_is_plain(openai_server: OpenAICompatServer) -> None:
    ask(model_on(openai_server), [user_message("a"), assistant_message("b"), user_message("c")])
    assert openai_server.requests[0].body["messages"][1] == {"role": "assistant", "content": "b"}


def test_logprobs_come_through_when_asked(openai_server: OpenAICompatServer) -> None:
    model = model_on(openai_server)
    plain = ask(model, "two words")
    assert plain.logprobs is None
    output = ask(model, "two words", config=GenerateConfig(logprobs=True, top_logprobs=2))
    body = openai_server.requests[1].body
    assert (body["logprobs"], body["top_logprobs"]) == (True, 2)
    assert output.logprobs is not None
    assert [t.token for t in output.logprobs] == ["echo:", "two", "words"]
    assert [round(t.logprob, 6) for t in output.logprobs] == [-0.1, -0.2, -0.3]
    assert [p.token for p in output.logprobs[1].top_logprobs] == ["two~0", "two~1"]


def test_the_key_comes_from_the_environment(
    openai_server: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    openai_server.api_key = "sk-from-env"
    assert ask(model_on(openai_server), "hi").completion == "echo: hi"
    assert openai_server.requests[0].authorization == "Bearer sk-from-env"


def test_the_base_url_comes_from_the_environment(
    openai_server: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/")
    model = get_model("openai/tiny")
    assert getattr(model.api, "base_url", None) == openai_server.url
    assert ask(model, "hi").completion == "echo: hi"


@pytest.mark.parametrize(
    ("code", "message"),
    [(400, "bad request: messages"), (401, "invalid key"), (404, "model 'tiny' not found")],
)
def test_client_errors_are_not_retried_and_say_status_server_and_message(
    openai_server: OpenAICompatServer, code: int, message: str
) -> None:
    openai_server.push(status(code, message))
    with pytest.raises(ModelError) as raised:
        ask(model_on(openai_server, max_retries=5), "hi")
    assert str(raised.value) == f"{code} from {openai_server.url}: {message}"
    assert raised.value.status == code
    assert len(openai_server.requests) == 1  # asked once, never again


def test_a_wrong_key_is_reported_without_the_key(
    openai_server: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0123456789")
    openai_server.api_key = "sk-right"
    # a server that echoes what it was sent must not put the key in our message
    openai_server.push(status(401, "invalid key sk-wrong-0123456789"))
    with pytest.raises(ModelError) as raised:
        ask(model_on(openai_server), "hi")
    assert str(raised.value) == f"401 from {openai_server.url}: invalid key [key]"


def test_an_unknown_model_is_a_404(openai_server: OpenAICompatServer) -> None:
    openai_server.models = {"known"}
    with pytest.raises(ModelError, match=r"404 from .*: model 'other' not found"):
        ask(model_on(openai_server, "other"), "hi")
    assert ask(model_on(openai_server, "known"), "hi").completion == "echo: hi"


def test_no_key_and_no_server_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://127.0.0.1/v1", "is not an http(s) URL"),
        ("127.0.0.1:8080", "is not an http(s) URL"),
        ("http://user:sk-secret@127.0.0.1:8080/v1", "carries credentials"),
    ],
)
def test_bad_base_urls_are_refused(url: str, reason: str) -> None:
    with pytest.raises(ConfigError) as raised:
        get_model("openai/tiny", base_url=url)
    assert reason in raised.value.one_line()
    assert "sk-secret" not in raised.value.one_line()


def test_unknown_provider_arguments_are_one_config_error() -> None:
    with pytest.raises(ConfigError, match="does not take colour"):
        get_model("openai/tiny", base_url="http://127.0.0.1:9/v1", colour="blue")
    with pytest.raises(ConfigError, match="does not take base_url"):
        get_model("mock/x", base_url="http://127.0.0.1:9/v1")


def test_config_fields_among_model_args_set_the_config() -> None:
    model = get_model("openai/tiny", base_url="http://127.0.0.1:9/v1", timeout=3, max_retries=1)
    assert (model.config.timeout, model.config.max_retries) == (3, 1)
