"""The ``anthropic`` provider: Claude models through the official SDK's Messages API.

``anthropic/<model>`` talks to ``base_url`` (``-M base_url``, else
``$ANTHROPIC_BASE_URL``, else Anthropic) with the key in ``ANTHROPIC_API_KEY`` and
nowhere else: the key is read when the client is made, lives only in that client, and
is scrubbed from any error text a server might echo it in.

The SDK's retries are off (``max_retries=0``): ``Model`` retries, so every call is in the
evidence. Errors are classified here: 408/409/429 (with ``Retry-After``), 5xx and 529
(overloaded), timeouts and dropped connections are ``InfrastructureError`` (retried);
any other status is a ``ModelError`` naming the status and the server's message.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
from typing import Any

from assay._infra import InfrastructureError
from assay.errors import ConfigError
from assay.model._anthropic_wire import parse_message, request_params, unsupported
from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._openai import check_base_url
from assay.model._output import ModelOutput
from assay.model._registry import modelapi
from assay.model._replay import replaying_only
from assay.model._sdk_provider import (
    check_supported,
    client_timeout,
    refuse_unsupported,
    scrubbed,
    status_failure,
)

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
ANTHROPIC_URL = "https://api.anthropic.com"


class AnthropicAPI:
    """One Claude model; one connection pool, made on first use (and after ``aclose``)."""

    def __init__(self, name: str, config: GenerateConfig, base_url: str) -> None:
        self.name = name
        self.config = config
        self.base_url = base_url
        self._client: Any = None

    def check_config(self, config: GenerateConfig) -> None:
        """A ConfigError naming the settings of *config* the Messages API cannot take,
        before any trial runs (a call with them is refused too)."""
        check_supported(unsupported(config), f"anthropic/{self.name}")

    def _connect(self) -> Any:
        if self._client is None:
            from anthropic import AsyncAnthropic  # deferred: a heavy import

            self._client = AsyncAnthropic(
                api_key=os.environ.get(KEY_ENV),
                base_url=self.base_url,
                max_retries=0,
                timeout=client_timeout(self.config),
            )
        return self._client

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """One Messages call, translated both ways."""
        import anthropic  # deferred, as above

        refuse_unsupported(unsupported(config), f"anthropic/{self.name}", "the Messages API")
        client = self._connect()
        params = request_params(self.name, messages, tools, config)
        if config.timeout is not None:
            params["timeout"] = config.timeout
        try:
            reply = await client.messages.create(**sdk_arguments(client.messages.create, params))
        except anthropic.APITimeoutError:
            raise InfrastructureError("timeout", f"no answer from {self.base_url}") from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            detail = _scrub(f"{type(cause).__name__}: {cause}")
            raise InfrastructureError("connection", f"{self.base_url}: {detail}") from None
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from None
        return parse_message(reply, f"anthropic/{self.name}", config.response_schema)

    def _status_error(self, exc: Any) -> Exception:
        """InfrastructureError for what a retry may fix, ModelError for the rest."""
        message = _scrub(_server_message(exc))
        return status_failure(int(exc.status_code), message, exc.response.headers, self.base_url)

    async def aclose(self) -> None:
        """Close the connection pool; a later call opens a new one."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()


def sdk_arguments(create: Any, params: dict[str, Any]) -> dict[str, Any]:
    """*params* as this SDK's ``messages.create`` takes them: a field it has no argument
    for (anthropic 2.x dropped ``temperature``, ``top_p`` and ``top_k``, which the API
    still takes) goes in ``extra_body``, where the SDK sends it as given; the user's own
    ``extra_body`` fields win."""
    accepted = _arguments_of(create)
    extra = {k: params.pop(k) for k in list(params) if k not in accepted}
    if extra:
        params["extra_body"] = {**extra, **params.get("extra_body", {})}
    return params


def _arguments_of(create: Any) -> frozenset[str]:
    key = getattr(create, "__func__", create)
    names = _ARGUMENTS.get(key)
    if names is None:
        names = _ARGUMENTS[key] = frozenset(inspect.signature(create).parameters)
    return names


_ARGUMENTS: dict[Any, frozenset[str]] = {}


def _server_message(exc: Any) -> str:
    """The server's words: ``error.message`` of Anthropic's error body, else its text."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return f"{kind}: {error['message']}" if isinstance(kind, str) else error["message"]
    text = exc.response.text if exc.response is not None else ""
    return (text or str(exc)).strip()[:500]


def _scrub(text: str) -> str:
    """*text* without the API key in it."""
    return scrubbed(text, os.environ.get(KEY_ENV))


@modelapi("anthropic")
def anthropic_provider(
    name: str, config: GenerateConfig, *, base_url: str | None = None
) -> AnthropicAPI:
    """``anthropic/<model>``; the key comes from ``$ANTHROPIC_API_KEY`` only."""
    model = f"anthropic/{name}"
    if importlib.util.find_spec("anthropic") is None:
        raise ConfigError("anthropic.missing", model=model)
    if not os.environ.get(KEY_ENV) and not replaying_only():  # re-scoring makes no calls
        raise ConfigError("anthropic.key", model=model)
    url = base_url or os.environ.get(BASE_URL_ENV) or ANTHROPIC_URL
    api = AnthropicAPI(name, config, check_base_url(model, url))
    api.check_config(config)
    return api
