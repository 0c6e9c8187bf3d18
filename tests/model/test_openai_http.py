"""The openai provider's HTTP transports (direct, the default: assay's own HTTP/1.1
client; aiohttp and httpx: through the real SDK) against the fault-injecting server on
127.0.0.1: a failure is named by what happened on the socket (timeout, refused, dropped,
cut off), whichever exception class the transport and the SDK turned it into, and all
transports answer the same."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest

from assay._infra import InfrastructureError
from assay.errors import ConfigError
from assay.model import GenerateConfig, ModelError, get_model
from tests.helpers import wait_for
from tests.servers.openai_compat import OpenAICompatServer, cut, drop, slow, status

TRANSPORTS = ["direct", "aiohttp", "httpx"]


def one_call(url: str, transport: str, **config: Any) -> Any:
    """One call with no retries: its output, or the exception it raised."""
    settings = GenerateConfig(max_retries=0, **config)
    model = get_model("openai/tiny", settings, base_url=url, transport=transport)

    async def call() -> Any:
        try:
            return await model.generate("hello there")
        except Exception as exc:
            return exc
        finally:
            await model.aclose()

    return anyio.run(call)


def test_direct_is_the_default_and_a_proxied_server_goes_through_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    proxied = get_model("openai/tiny", base_url="http://10.1.2.3:8000/v1")
    assert getattr(proxied.api, "transport", None) == "aiohttp"  # it honours the proxy
    with pytest.raises(ConfigError, match="through the proxy") as raised:
        get_model("openai/tiny", base_url="http://10.1.2.3:8000/v1", transport="direct")
    assert "NO_PROXY" in raised.value.one_line()
    monkeypatch.setenv("no_proxy", "10.1.2.3")
    direct = get_model("openai/tiny", base_url="http://10.1.2.3:8000/v1")
    assert getattr(direct.api, "transport", None) == "direct"


def test_a_header_that_cannot_be_sent_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'x-evil'") as raised:
        get_model(
            "openai/tiny",
            base_url="http://127.0.0.1:9/v1",
            default_headers={"x-evil": "a\r\nhost: elsewhere"},
        )
    assert "\n" not in raised.value.one_line()


def test_an_unknown_transport_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown transport 'curl'") as raised:
        get_model("openai/tiny", base_url="http://127.0.0.1:9/v1", transport="curl")
    assert "-M transport=aiohttp" in raised.value.one_line()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_both_transports_answer_alike(openai_server: OpenAICompatServer, transport: str) -> None:
    output = one_call(openai_server.url, transport)
    assert output.completion == "echo: hello there"
    assert (output.usage.input_tokens, output.usage.output_tokens) == (2, 3)
    assert openai_server.requests[0].body["messages"][0]["content"] == "hello there"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_refused_connection_is_a_connection_failure(transport: str) -> None:
    with socket.socket() as sock:  # bound, never listening, held: it refuses
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        failure = one_call(f"http://127.0.0.1:{port}/v1", transport)
    assert isinstance(failure, InfrastructureError)
    assert failure.reason == "connection"
    # after the last (here the only) call: what the socket said, and where
    # (aiohttp says ConnectionRefusedError, httpx ConnectError)
    assert f"the last: http://127.0.0.1:{port}/v1: Connect" in failure.detail


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault", [drop, cut], ids=["dropped", "cut"])
def test_a_lost_connection_is_a_connection_failure(
    openai_server: OpenAICompatServer, transport: str, fault: Any
) -> None:
    openai_server.push(fault())
    failure = one_call(openai_server.url, transport)
    assert isinstance(failure, InfrastructureError), failure
    assert (failure.reason, failure.status) == ("connection", None)
    assert f"the last: {openai_server.url}: " in failure.detail


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_slow_server_is_a_timeout(openai_server: OpenAICompatServer, transport: str) -> None:
    openai_server.push(slow(2.0))
    failure = one_call(openai_server.url, transport, timeout=0.3)
    assert isinstance(failure, InfrastructureError), failure
    assert failure.reason == "timeout"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_statuses_keep_their_meaning(openai_server: OpenAICompatServer, transport: str) -> None:
    openai_server.push(status(503, retry_after="7"), status(400, "bad messages"))
    unavailable = one_call(openai_server.url, transport)
    assert isinstance(unavailable, InfrastructureError)
    assert (unavailable.reason, unavailable.status, unavailable.retry_after) == ("http_503", 503, 7)
    refused = one_call(openai_server.url, transport)
    assert isinstance(refused, ModelError)
    assert str(refused) == f"400 from {openai_server.url}: bad messages"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_connections_stay_open_between_calls_and_close_on_aclose(
    openai_server: OpenAICompatServer, transport: str
) -> None:
    config = GenerateConfig(max_connections=4)
    model = get_model("openai/tiny", config, base_url=openai_server.url, transport=transport)

    async def main() -> None:
        for _ in range(3):
            async with anyio.create_task_group() as group:
                for i in range(4):
                    group.start_soon(model.generate, f"q{i}")
        assert openai_server.open_connections == 4  # kept alive and reused
        await model.aclose()

    anyio.run(main)
    assert len(openai_server.requests) == 12
    assert wait_for(lambda: openai_server.open_connections == 0)
