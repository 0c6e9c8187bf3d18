"""The ``google`` provider: Gemini models through the official SDK (``google-genai``).

``google/<model>`` talks to ``base_url`` (``-M base_url``, else ``$GOOGLE_GEMINI_BASE_URL``,
else Google) with the key in ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``) and nowhere else:
read when the client is made, it lives only in that client and is scrubbed from any error
text a server might echo it in.

The SDK's retries are off (``HttpRetryOptions(attempts=1)``, which also stops its own
quiet retry of dropped connections): ``Model`` retries, so every call is in the evidence.
408/409/429 (with ``Retry-After``), 5xx, timeouts and dropped connections are
``InfrastructureError`` (retried); any other status is a ``ModelError``.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from assay._infra import InfrastructureError
from assay.errors import ConfigError
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig
from assay.model._google_wire import parse_response, request_params, unsupported
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

KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
GOOGLE_URL = "https://generativelanguage.googleapis.com"


def _key() -> str | None:
    return next((k for env in KEY_ENVS if (k := os.environ.get(env))), None)


class GoogleAPI:
    """One Gemini model; one SDK client, made on first use (and after ``aclose``)."""

    def __init__(self, name: str, config: GenerateConfig, base_url: str) -> None:
        self.name = name
        self.config = config
        self.base_url = base_url
        self._client: Any = None
        self._http: Any = None

    def check_config(self, config: GenerateConfig) -> None:
        """A ConfigError naming the settings of *config* Gemini cannot take, before any
        trial runs (a call with them is refused too)."""
        check_supported(unsupported(config), f"google/{self.name}")

    def _connect(self) -> Any:
        if self._client is None:
            import httpx  # deferred, as the SDK: heavy imports
            from google import genai
            from google.genai import types

            timeout = client_timeout(self.config)
            # httpx, ours to close: with aiohttp installed the SDK would use a subclass of
            # aiohttp's ClientSession, which aiohttp deprecates (a warning on every run)
            self._http = httpx.AsyncClient(timeout=timeout)
            options = types.HttpOptions(
                base_url=self.base_url,
                timeout=int(timeout * 1000),  # milliseconds
                retry_options=types.HttpRetryOptions(attempts=1),
                httpx_async_client=self._http,
            )
            self._client = genai.Client(api_key=_key(), http_options=options)
        return self._client

    async def generate(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], config: GenerateConfig
    ) -> ModelOutput:
        """One ``generateContent`` call, translated both ways."""
        refuse_unsupported(unsupported(config), f"google/{self.name}", "generateContent")
        client = self._connect()
        params = request_params(self.name, messages, tools, config)
        if config.timeout is not None:
            http = params["config"].setdefault("http_options", {})
            http["timeout"] = int(config.timeout * 1000)
        try:
            reply = await client.aio.models.generate_content(**params)
        except Exception as exc:  # the SDK's, httpx's or aiohttp's: sorted below
            raise self._failure(exc) from None
        try:
            return parse_response(reply, f"google/{self.name}")
        except ValueError as exc:
            raise ModelError(200, self.base_url, str(exc)) from None

    def _failure(self, exc: Exception) -> Exception:
        """InfrastructureError for what a retry may fix, ModelError for the rest."""
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            message = _scrub(f"{exc.status}: {exc.message}" if exc.status else str(exc.message))
            headers = getattr(exc.response, "headers", None) or {}
            return status_failure(int(exc.code), message, headers, self.base_url)
        kind = type(exc)
        if kind.__module__.split(".")[0] in ("httpx", "aiohttp", "httpcore") or isinstance(
            exc, OSError | TimeoutError
        ):
            timed_out = "Timeout" in kind.__name__ or isinstance(exc, TimeoutError)
            detail = _scrub(f"{kind.__name__}: {exc}")
            reason = "timeout" if timed_out else "connection"
            return InfrastructureError(reason, f"{self.base_url}: {detail}")
        return exc

    async def aclose(self) -> None:
        """Close the connection pool; a later call opens a new one."""
        client, self._client = self._client, None
        http, self._http = self._http, None
        if client is not None:
            await client.aio.aclose()
        if http is not None:
            await http.aclose()


def _installed() -> bool:
    """Whether ``google-genai`` is importable (without importing it: it is heavy)."""
    try:
        return importlib.util.find_spec("google.genai") is not None
    except ModuleNotFoundError:  # no ``google`` namespace at all
        return False


def _scrub(text: str) -> str:
    """*text* without the API key in it."""
    return scrubbed(text, _key())


@modelapi("google")
def google_provider(name: str, config: GenerateConfig, *, base_url: str | None = None) -> GoogleAPI:
    """``google/<model>``; the key comes from ``$GOOGLE_API_KEY`` (or ``$GEMINI_API_KEY``)."""
    model = f"google/{name}"
    if not _installed():
        raise ConfigError(
            "model.extra_missing", model=model, package="google-genai", extra="google"
        )
    if _key() is None and not replaying_only():  # re-scoring makes no calls
        raise ConfigError("model.profile_key", model=model, env="GOOGLE_API_KEY")
    url = base_url or os.environ.get(BASE_URL_ENV) or GOOGLE_URL
    api = GoogleAPI(name, config, check_base_url(model, url))
    api.check_config(config)
    return api
