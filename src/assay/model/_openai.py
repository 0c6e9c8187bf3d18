"""The ``openai`` provider: any OpenAI-compatible chat-completions server, via the SDK.

``openai/<model>`` talks to ``base_url`` (the ``base_url`` argument, else the
``OPENAI_BASE_URL`` environment variable, else OpenAI itself) with the key in
``OPENAI_API_KEY``. The key is read from the environment when the client is made and
lives only in that client: it is never an attribute of anything recorded, and it is
scrubbed from error messages a server might echo it in.

The SDK's own retries are off (``max_retries=0``): ``Model`` retries, so that every call
is in the evidence. This module only translates: SDK errors become
``InfrastructureError`` (retryable: 408, 409, 429, 5xx, timeouts, dropped connections)
or ``ModelError`` (the rest: 400, 401, 404, ...), naming the status and the server.
The SDK's HTTP client is aiohttp unless ``transport="httpx"`` (see ``_openai_http``).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any
from urllib.parse import urlsplit

from assay._infra import InfrastructureError, retry_after_seconds
from assay.errors import ConfigError
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._model import DEFAULT_MAX_CONNECTIONS
from assay.model._openai_http import (
    client_count,
    failure_of,
    http_client,
    pick_transport,
    transport_errors,
)
from assay.model._openai_wire import encode_request, parse_completion
from assay.model._output import ModelOutput
from assay.model._registry import modelapi

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"
"""Sent to a server given by URL when no key is set: local servers need none."""

_RETRYABLE = {408, 409, 429}
_CLIENT_ARGS = {"organization", "project", "default_headers", "default_query"}


class OpenAIAPI:
    """One model on one OpenAI-compatible server; its connection pools, made lazily."""

    def __init__(
        self,
        name: str,
        config: GenerateConfig,
        base_url: str | None = None,
        api_key: str | None = None,
        transport: str | None = None,
        **client_args: Any,
    ) -> None:
        self.name = name
        self.base_url = check_base_url(f"openai/{name}", base_url or OPENAI_URL)
        self.config = config
        self.connections = config.max_connections or DEFAULT_MAX_CONNECTIONS
        self._api_key = api_key
        self._client_args = client_args
        self._clients: list[Any] = []
        self._turn = 0
        self._url = self.base_url + "/chat/completions"
        if api_key is None and base_url is None and not os.environ.get(KEY_ENV):
            raise ConfigError("model.api_key_missing", model=f"openai/{name}", env=KEY_ENV)
        import openai  # deferred to here: heavy, and not to be counted in a call's timeout

        self._sdk = openai
        self.transport = pick_transport(f"openai/{name}", transport, openai)
        self._dropped = (openai.APITimeoutError, openai.APIConnectionError)
        self._unmapped: tuple[type[BaseException], ...] = ()

    def _connect(self) -> Any:
        """An SDK client for the next call, the clients made on first use (and again
        after ``aclose``); calls go round-robin when there are several (httpx)."""
        if not self._clients:
            count = client_count(self.transport, self.connections)
            key = self._api_key or os.environ.get(KEY_ENV) or NO_KEY
            self._clients = [self._new_client(key, count) for _ in range(count)]
            self._unmapped = transport_errors(self.transport)
        if len(self._clients) == 1:
            return self._clients[0]
        self._turn = (self._turn + 1) % len(self._clients)
        return self._clients[self._turn]

    def _new_client(self, key: str, count: int) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.config.timeout if self.config.timeout is not None else 600.0,
            http_client=http_client(self._sdk, self.transport, self.connections, count),
            **self._client_args,
        )

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """One chat completion; the body's bytes are parsed straight into a ModelOutput."""
        openai = self._sdk
        client = self._connect()
        options: dict[str, Any] = {}
        if config.timeout is not None:
            options["timeout"] = config.timeout
        try:
            # The client's own POST (its documented way to custom requests): the SDK
            # still does auth, headers, timeouts and errors, but skips re-validating params
            # it would then build pydantic models from; the bytes go and come back as
            # they are (JSON encoded by msgspec; the URL whole, so it is parsed once).
            body = await client.post(
                self._url,
                cast_to=bytes,
                content=encode_request(self.name, messages, tools, config),
                options=options,
            )
        except self._dropped as exc:
            raise failure_of(exc, openai, self.base_url, self._scrub) from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except self._unmapped as exc:
            detail = self._scrub(f"{type(exc).__name__}: {exc}")
            raise InfrastructureError("connection", f"{self.base_url}: {detail}") from None
        try:
            return parse_completion(body, f"openai/{self.name}")
        except ValueError as exc:
            raise ModelError(200, self.base_url, str(exc)) from None

    def _status_error(self, exc: Any) -> Exception:
        """A status error as InfrastructureError (retry it) or ModelError (do not)."""
        status = int(exc.status_code)
        message = self._scrub(_server_message(exc))
        if status in _RETRYABLE or status >= 500:
            retry_after = retry_after_seconds(exc.response.headers.get("retry-after"))
            reason = "rate_limited" if status == 429 else f"http_{status}"
            return InfrastructureError(reason, message, retry_after, status)
        return ModelError(status, self.base_url, message)

    def _scrub(self, text: str) -> str:
        """*text* without the API key in it (a server may echo what it was sent)."""
        key = self._api_key or os.environ.get(KEY_ENV)
        if key and len(key) >= 4:
            text = text.replace(key, "[key]")
        return text

    async def aclose(self) -> None:
        """Close the connection pool; a later call opens a new one."""
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()


def _server_message(exc: Any) -> str:
    """The server's own words: ``error.message`` of a JSON body, or the body's text."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    text = exc.response.text if exc.response is not None else ""
    return (text or str(exc)).strip()[:500]


def check_base_url(model: str, url: str) -> str:
    """*url* without a trailing slash; a ConfigError unless it is a plain http(s) URL
    (user and password in a URL would be a secret in the spec)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError("model.base_url", model=model, url=url, reason="is not an http(s) URL")
    if parts.username is not None or parts.password is not None:
        shown = url.replace(parts.netloc, parts.netloc.rpartition("@")[2])
        raise ConfigError("model.base_url", model=model, url=shown, reason="carries credentials")
    return url.rstrip("/")


@modelapi("openai")
def openai_provider(
    name: str,
    config: GenerateConfig,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    transport: str | None = None,
    **args: Any,
) -> OpenAIAPI:
    """``openai/<model>``: *base_url* defaults to ``$OPENAI_BASE_URL``, then OpenAI; the
    key to *api_key* (for programs, e.g. a local server's own), then ``$OPENAI_API_KEY``.
    *transport* is the SDK's HTTP client, ``aiohttp`` (the default when installed) or
    ``httpx``. *args* may be ``organization``, ``project``, ``default_headers``,
    ``default_query`` (passed to ``AsyncOpenAI``)."""
    model = f"openai/{name}"
    if importlib.util.find_spec("openai") is None:
        raise ConfigError("model.sdk_missing", model=model, package="openai")
    unknown = sorted(set(args) - _CLIENT_ARGS)
    if unknown:
        raise ConfigError("model.args", model=model, args=", ".join(unknown))
    base_url = base_url or os.environ.get(BASE_URL_ENV) or None
    return OpenAIAPI(name, config, base_url, api_key, transport, **args)
