"""The ``openai`` provider: any OpenAI-compatible chat-completions server, via the SDK.

``openai/<model>`` talks to ``base_url`` (the ``base_url`` argument, else the
``OPENAI_BASE_URL`` environment variable, else OpenAI itself) with the key in
``OPENAI_API_KEY``. The key is read from the environment when the client is made and
lives only in that client and the request it builds: it is never an attribute of
anything recorded, and it is scrubbed from error messages a server might echo it in.

Calls go out through assay's own HTTP/1.1 client (``transport="direct"``, the default:
``_openai_direct``) unless the environment names a proxy for the server or another
transport is asked for: then through the SDK, with its own retries off
(``max_retries=0``: ``Model`` retries, so that every call is in the evidence); the SDK
builds this model's request once and its HTTP client (aiohttp, or ``transport="httpx"``)
sends each call's copy (``_openai_request``, ``_openai_http``). Either way the body is
encoded and the answer parsed here (``_openai_wire``), and failures translate alike:
``InfrastructureError`` (retryable: 408, 409, 429, 5xx, timeouts, dropped connections)
or ``ModelError`` (the rest: 400, 401, 404, ...), naming the status and the server.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any
from urllib.parse import urlencode, urlsplit

from assay._infra import InfrastructureError, retry_after_seconds
from assay.errors import ConfigError
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._model import DEFAULT_MAX_CONNECTIONS
from assay.model._openai_direct import DirectPost, header_problem, request_headers
from assay.model._openai_http import (
    client_count,
    failure_of,
    http_client,
    http_module,
    pick_transport,
    sdk_transport,
    shared_ssl_context,
    transport_errors,
)
from assay.model._openai_request import PreparedPost, server_message
from assay.model._openai_wire import (
    encode_request,
    header_lines,
    parse_completion,
    unsupported,
)
from assay.model._output import ModelOutput
from assay.model._registry import modelapi
from assay.model._replay import replaying_only

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
        self._clients: list[Any] = []  # SDK clients
        self._http: list[Any] = []  # the HTTP client of each, which sends the requests
        self._post: PreparedPost | None = None
        self._turn = 0
        self._url = self.base_url + "/chat/completions"
        keyless = api_key is None and base_url is None and not os.environ.get(KEY_ENV)
        if keyless and not replaying_only():  # re-scoring answers from evidence: no calls
            raise ConfigError("model.api_key_missing", model=f"openai/{name}", env=KEY_ENV)
        self._direct: DirectPost | None = None
        self._unmapped: tuple[type[BaseException], ...] = ()
        self._sdk: Any = None
        self.transport = pick_transport(f"openai/{name}", transport, self.base_url)
        if self.transport == "direct":
            bad = header_problem(dict(client_args.get("default_headers") or {}))
            if bad is not None:
                raise ConfigError("model.header", model=f"openai/{name}", header=bad)
            return
        import openai  # deferred to here: heavy, and not to be counted in a call's timeout

        self._sdk = openai
        PreparedPost.check_sdk(f"openai/{name}", openai)
        self.transport = sdk_transport(f"openai/{name}", self.transport, openai)

    def check_config(self, config: GenerateConfig) -> None:
        """A ConfigError naming the settings of *config* chat completions cannot take,
        before any trial runs (a call with them is refused too)."""
        refused = unsupported(config)
        if refused:
            model = f"openai/{self.name}"
            raise ConfigError("model.option_unsupported", model=model, options=", ".join(refused))

    def _open_direct(self) -> DirectPost:
        """The ``direct`` transport's pool, made on first use (and again after
        ``aclose``), with the key as it is then."""
        from assay import __version__  # for the user agent

        args = self._client_args
        key = self._api_key or os.environ.get(KEY_ENV) or NO_KEY
        headers = request_headers(
            key,
            args.get("organization"),
            args.get("project"),
            args.get("default_headers"),
            __version__,
        )
        query = args.get("default_query")
        url = self._url + (f"?{urlencode(query)}" if query else "")
        self._direct = DirectPost(url, headers, self.connections, self.base_url, self._scrub)
        return self._direct

    def _connect(self) -> tuple[Any, PreparedPost]:
        """The HTTP client for the next call and the prepared POST, made on first use
        (and again after ``aclose``); calls go round-robin when there are several
        clients (httpx)."""
        if self._post is None:
            count = client_count(self.transport, self.connections)
            key = self._api_key or os.environ.get(KEY_ENV) or NO_KEY
            verify = shared_ssl_context(self._sdk, self.transport)
            self._http = [
                http_client(self._sdk, self.transport, self.connections, count, verify)
                for _ in range(count)
            ]
            self._clients = [self._new_client(key, http) for http in self._http]
            self._unmapped = transport_errors(self.transport)
            module = http_module(type(self._http[0]))
            self._post = PreparedPost(self._clients[0], self._url, module)
        if len(self._http) == 1:
            return self._http[0], self._post
        self._turn = (self._turn + 1) % len(self._http)
        return self._http[self._turn], self._post

    def _new_client(self, key: str, http: Any) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.config.timeout if self.config.timeout is not None else 600.0,
            http_client=http,
            **self._client_args,
        )

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """One chat completion: this call's body (encoded by msgspec) sent by the
        transport; the answer's bytes are parsed straight into a ModelOutput."""
        refused = unsupported(config)
        if refused:
            reason = f"chat completions does not take {', '.join(refused)}; remove it"
            raise ModelError(None, f"openai/{self.name}", reason)
        body = encode_request(self.name, messages, tools, config)
        if self._sdk is None:
            direct = self._direct or self._open_direct()
            extra = header_lines(config.extra_headers)
            response: Any = await direct.post(body, config.timeout, extra)
        else:
            response = await self._sdk_post(body, config.timeout, config.extra_headers)
        if not 200 <= response.status_code < 300:
            raise self._status_error(response)
        try:
            return parse_completion(response.content, f"openai/{self.name}")
        except ValueError as exc:
            raise ModelError(200, self.base_url, str(exc)) from None

    async def _sdk_post(
        self, body: bytes, timeout: float | None, extra: dict[str, str] | None
    ) -> Any:
        """The SDK's request for this model with *body*, sent by its HTTP client
        (``_openai_request`` says why not ``client.post``); failures translated."""
        http, post = self._connect()
        try:
            return await http.send(post.request(http, body, timeout, extra))
        except post.timeouts as exc:
            raise failure_of(exc, True, self.base_url, self._scrub) from None
        except post.dropped as exc:
            raise failure_of(exc, False, self.base_url, self._scrub) from None
        except self._unmapped as exc:
            detail = self._scrub(f"{type(exc).__name__}: {exc}")
            raise InfrastructureError("connection", f"{self.base_url}: {detail}") from None

    def _status_error(self, response: Any) -> Exception:
        """A non-2xx answer as InfrastructureError (retry it) or ModelError (do not)."""
        status = int(response.status_code)
        message = self._scrub(server_message(response))
        if status in _RETRYABLE or status >= 500:
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
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
        direct, self._direct = self._direct, None
        if direct is not None:
            await direct.aclose()
        clients, self._clients, self._http, self._post = self._clients, [], [], None
        for client in clients:
            await client.close()


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
    *transport* is ``direct`` (assay's own HTTP/1.1 client, the default unless a proxy
    is set for the server) or the SDK's HTTP client, ``aiohttp`` or ``httpx``. *args*
    may be ``organization``, ``project``, ``default_headers``, ``default_query`` (sent
    by the direct transport, or passed to ``AsyncOpenAI``)."""
    model = f"openai/{name}"
    if importlib.util.find_spec("openai") is None:  # not in the core: the 'openai' extra
        raise ConfigError("model.extra_missing", model=model, package="openai", extra="openai")
    unknown = sorted(set(args) - _CLIENT_ARGS)
    if unknown:
        raise ConfigError("model.args", model=model, args=", ".join(unknown))
    base_url = base_url or os.environ.get(BASE_URL_ENV) or None
    return OpenAIAPI(name, config, base_url, api_key, transport, **args)
