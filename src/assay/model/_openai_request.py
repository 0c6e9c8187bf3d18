"""One chat-completions POST: the SDK's own request, built once, sent with a new body.

``client.post`` rebuilds the same request for every call: a pydantic options object, the
headers merged three times over (auth, the SDK's platform headers, the client's), the
URL parsed twice, the exceptions mapped, the body read back through the SDK's response
wrapper. On loopback that is about half of a call's CPU (0.5 ms a call through
``client.post``, 0.27 ms sending the same request through the same HTTP client: see
``bench/README.md``), and a harness in one Python thread is bound by exactly that.

So the SDK client builds this model's request once per timeout, with its own
``_build_request`` (auth, ``default_headers``, organization, project, ``default_query``,
the user agent and ``X-Stainless-*`` headers, the read timeout), and each call sends a
copy carrying its own JSON body through the HTTP client the SDK was given (aiohttp under
httpx's interface, or httpx), which also keeps the cookies a server set. Nothing the SDK
does per request is lost for the calls assay makes: its retries are off
(``max_retries=0``, so ``x-stainless-retry-count`` is always 0), the key is a fixed
string (no key provider to refresh, no workload identity), and its idempotency header is
not used by the OpenAI client. Failures are read from the same things the SDK reads: the
status and body of a non-2xx answer, httpx's timeout and request errors.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import anyio

from assay.errors import ConfigError

TESTED_WITH = "3.60.0"
"""The newest openai release the prepared POST is tested with (``tests/model``)."""

_DROPPED_HEADERS = (b"content-length", b"transfer-encoding", b"cookie")
"""Set again for each call by the request that carries it: the length of its body, and
the cookies the HTTP client holds by then."""


class PreparedPost:
    """The POST to *url* as the SDK builds it, for each timeout asked for."""

    def __init__(self, client: Any, url: str, http: Any) -> None:
        self._client = client
        self._url = url
        self._request = http.Request
        self._headers = http.Headers
        self._templates: dict[float | None, tuple[Any, Any, Any]] = {}
        self.timeouts: tuple[type[BaseException], ...] = (http.TimeoutException,)
        self.dropped: tuple[type[BaseException], ...] = (
            http.RequestError,
            ssl.SSLError,
            anyio.EndOfStream,
        )

    def request(
        self,
        http_client: Any,
        body: bytes,
        timeout: float | None,
        extra: dict[str, str] | None = None,
    ) -> Any:
        """A request carrying *body*, to be sent by *http_client* (``send``), with the
        *extra* headers (``extra_headers``) over the SDK's own."""
        template = self._templates.get(timeout)
        if template is None:
            template = self._templates[timeout] = self._template(timeout)
        url, headers, extensions = template
        if extra:
            headers = headers.copy()
            headers.update(extra)
        return self._request(
            "POST",
            url,
            headers=headers,
            content=body,
            cookies=http_client.cookies,
            extensions=extensions,
        )

    @staticmethod
    def check_sdk(model: str, sdk: Any) -> None:
        """A ConfigError naming what is missing if this SDK lacks the two private names a
        prepared POST needs (both there from openai 1.0 to at least ``TESTED_WITH``)."""
        try:
            from openai._models import FinalRequestOptions  # noqa: F401
        except ImportError:
            missing = "openai._models.FinalRequestOptions"
        else:
            if callable(getattr(sdk.AsyncOpenAI, "_build_request", None)):
                return
            missing = "AsyncOpenAI._build_request"
        version = getattr(sdk, "__version__", "?")
        raise ConfigError(
            "model.sdk_changed",
            model=model,
            package="openai",
            version=version,
            missing=missing,
            tested=TESTED_WITH,
        )

    def _template(self, timeout: float | None) -> tuple[Any, Any, Any]:
        """URL, headers and extensions of the SDK's own request (``FinalRequestOptions``
        is what ``client.post`` builds; ``_build_request`` is what it then calls). The
        headers are kept as httpx ``Headers``: a request copies them as they are, where a
        list would be checked and normalised again for every call."""
        from openai._models import FinalRequestOptions

        options: dict[str, Any] = {"method": "post", "url": self._url}
        if timeout is not None:
            options["timeout"] = timeout
        built = self._client._build_request(FinalRequestOptions.construct(**options))
        raw = [(k, v) for k, v in built.headers.raw if k.lower() not in _DROPPED_HEADERS]
        return built.url, self._headers(raw, encoding=built.headers.encoding), built.extensions


def server_message(response: Any) -> str:
    """The server's own words: ``error.message`` of a JSON body, or the body's text."""
    text: str = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return (text.strip() or f"Error code: {response.status_code}")[:500]
