"""The openai provider's prepared request against the real server on 127.0.0.1, through
the real SDK (``model/_openai_request.py``: what the SDK puts on a request built once,
key, client arguments, its own headers, the read timeout) and through the ``direct``
transport (``model/_openai_direct.py``: the same key and client arguments): they reach
the server on every call, each call with its own body, and cookies a server sets are
sent back."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from assay.model import GenerateConfig, Model, get_model
from tests.servers.openai_compat import OpenAICompatServer

TRANSPORTS = ["direct", "aiohttp", "httpx"]
SDK = "aiohttp"  # what the SDK alone puts on a request is checked through this one


def calls(model: Model, *prompts: str, config: GenerateConfig | None = None) -> list[str]:
    """The completions of *prompts*, one call each, in order."""

    async def main() -> list[str]:
        try:
            return [(await model.generate(p, config=config)).completion for p in prompts]
        finally:
            await model.aclose()

    return anyio.run(main)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_key_client_arguments_and_sdk_headers_reach_the_server_on_every_call(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    model = get_model(
        "openai/tiny",
        base_url=openai_server.url,
        transport=transport,
        api_key="sk-local-0123",
        organization="org-7",
        project="proj-9",
        default_headers={"X-Team": "evals"},
        default_query={"api-version": "2"},
    )
    assert calls(model, "one", "two words") == ["echo: one", "echo: two words"]
    for seen, text in zip(openai_server.requests, ["one", "two words"], strict=True):
        assert seen.target == "/v1/chat/completions?api-version=2"
        assert seen.authorization == "Bearer sk-local-0123"
        headers = seen.headers
        assert (headers["openai-organization"], headers["openai-project"]) == ("org-7", "proj-9")
        assert headers["x-team"] == "evals"
        if transport == "direct":
            assert headers["user-agent"].startswith("assay/")
            assert not [h for h in headers if h.startswith("x-stainless")]
        else:
            assert headers["user-agent"].startswith("AsyncOpenAI/Python ")
            assert headers["x-stainless-retry-count"] == "0"
        assert headers["content-type"] == "application/json"
        assert seen.body["messages"] == [{"role": "user", "content": text}]
        assert int(headers["content-length"]) == len(json.dumps(seen.body, separators=(",", ":")))


def test_a_calls_timeout_is_its_requests_read_timeout(openai_server: OpenAICompatServer) -> None:
    config = GenerateConfig(timeout=30)
    model = get_model("openai/tiny", config, base_url=openai_server.url, transport=SDK)
    calls(model, "a")
    calls(model, "b", config=GenerateConfig(timeout=7))
    calls(model, "c")
    read = [float(s.headers["x-stainless-read-timeout"]) for s in openai_server.requests]
    assert read == [30.0, 7.0, 30.0]


def test_without_a_timeout_the_sdk_default_applies(openai_server: OpenAICompatServer) -> None:
    calls(get_model("openai/tiny", base_url=openai_server.url, transport=SDK), "a")
    (seen,) = openai_server.requests
    assert float(seen.headers["x-stainless-read-timeout"]) == 600.0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_cookie_the_server_sets_is_sent_back(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    openai_server.cookie = "balancer=b7; Path=/"
    model = get_model("openai/tiny", base_url=openai_server.url, transport=transport)
    calls(model, "first", "second")
    first, second = openai_server.requests
    assert "cookie" not in first.headers
    assert second.headers.get("cookie") == "balancer=b7"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_cookie_sent_is_the_latest_one_whatever_the_timeout(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    model = get_model("openai/tiny", base_url=openai_server.url, transport=transport)
    five = GenerateConfig(timeout=5)

    async def main() -> None:
        openai_server.cookie = "balancer=b7; Path=/"
        await model.generate("first")
        openai_server.cookie = "balancer=c8; Path=/"
        await model.generate("second", config=five)  # its request is first built here
        await model.generate("third", config=five)
        await model.aclose()

    anyio.run(main)
    sent = [s.headers.get("cookie") for s in openai_server.requests]
    assert sent == [None, "balancer=b7", "balancer=c8"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_many_calls_in_flight_each_carry_their_own_body(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    config = GenerateConfig(max_connections=8)
    model = get_model("openai/tiny", config, base_url=openai_server.url, transport=transport)
    answers: dict[int, str] = {}

    async def one(i: int) -> None:
        answers[i] = (await model.generate(f"question {i}")).completion

    async def main() -> Any:
        async with anyio.create_task_group() as group:
            for i in range(40):
                group.start_soon(one, i)
        await model.aclose()

    anyio.run(main)
    assert answers == {i: f"echo: question {i}" for i in range(40)}
    sent = sorted(s.body["messages"][0]["content"] for s in openai_server.requests)
    assert sent == sorted(f"question {i}" for i in range(40))


def test_an_sdk_without_the_request_builder_is_one_line_naming_it(
    openai_server: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A future SDK that renamed the private builder fails when the model is made, with
    what is missing and which versions work, not with an AttributeError mid-run."""
    import openai

    from assay.errors import ConfigError

    monkeypatch.setattr(openai.AsyncOpenAI, "_build_request", None)  # gone
    with pytest.raises(ConfigError) as caught:
        get_model("openai/m", base_url=openai_server.url, transport=SDK)
    assert caught.value.key == "model.sdk_changed"
    text = str(caught.value)
    assert "AsyncOpenAI._build_request" in text and "openai" in text and "\n" not in text
