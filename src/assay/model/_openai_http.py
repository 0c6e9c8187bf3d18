"""Which transport carries a call, the HTTP client under the openai SDK, and what its
failures mean.

``direct`` (``_openai_direct``, assay's own HTTP/1.1 pool) is the default: it does not
go through a proxy, so when the environment names one for the server the SDK carries
the calls instead. Under the SDK, the SDK builds every request and reads every answer;
the library that moves the bytes is its ``http_client``. ``aiohttp`` (the SDK's own
``DefaultAioHttpClient``, the ``openai[aiohttp]`` extra) is the SDK's default here: on
loopback at 200 connections it costs about 0.3 ms of CPU per call where the SDK's httpx
pool costs more (``bench/``), and a harness in one Python thread is bound by exactly
that. ``transport="httpx"`` picks the SDK's default client instead (also used when
aiohttp is not installed).

The two report failures differently: the SDK's aiohttp transport maps aiohttp's
exceptions onto httpx's, and a refused or dropped connection comes out as httpx's
``ConnectTimeout``. So a failure is
classified by its root cause (what the socket said), not by the SDK's class alone.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from typing import Any

from assay._infra import InfrastructureError
from assay.errors import ConfigError
from assay.model._proxy import proxy_for

TRANSPORTS = ("direct", "aiohttp", "httpx")
SHARD = 32
"""Connections per httpx client: its pool looks at every connection for each request."""


def pick_transport(model: str, requested: str | None, base_url: str) -> str:
    """The transport to use: *requested*, else ``direct`` (assay's own client), unless
    the environment sends *base_url* through a proxy: then the SDK's (``sdk``, resolved
    by ``sdk_transport`` once the SDK is imported), which honours proxies."""
    if requested is not None and requested not in TRANSPORTS:
        raise ConfigError(
            "model.transport", model=model, transport=requested, known=", ".join(TRANSPORTS)
        )
    proxy = proxy_for(base_url)
    if requested == "direct" and proxy is not None:
        raise ConfigError("model.transport_proxy", model=model, url=base_url)
    if requested is None:
        return "sdk" if proxy is not None else "direct"
    return requested


def sdk_transport(model: str, requested: str, sdk: Any) -> str:
    """The SDK's HTTP client for *requested* (``sdk``: aiohttp when the SDK can use it,
    else httpx)."""
    usable = hasattr(sdk, "DefaultAioHttpClient") and importlib.util.find_spec("aiohttp")
    if requested == "aiohttp" and not usable:
        raise ConfigError("model.sdk_missing", model=model, package="openai[aiohttp]")
    if requested == "sdk":
        return "aiohttp" if usable else "httpx"
    return requested


def client_count(transport: str, connections: int) -> int:
    """How many SDK clients share the connections: one aiohttp session holds them all
    (its pool is a queue of idle connections); httpx pools are cut into ``SHARD``s."""
    return 1 if transport == "aiohttp" else -(-connections // SHARD)


def _http_class(sdk: Any, transport: str) -> Any:
    return sdk.DefaultAioHttpClient if transport == "aiohttp" else sdk.DefaultAsyncHttpxClient


def http_module(http_class: Any) -> Any:
    """httpx or httpx2, whichever this SDK is built on: the package of its AsyncClient
    (for ``Request``, ``Limits`` and the exception classes)."""
    base = next(c for c in http_class.__mro__ if c.__name__ == "AsyncClient")
    return sys.modules[base.__module__.partition(".")[0]]


def shared_ssl_context(sdk: Any, transport: str) -> Any:
    """One TLS context, made as the HTTP client would make its own (``verify=True``,
    ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured), for all of a model's clients and
    transports: the client makes one per transport, and one more per proxy variable set
    (each reads the CA bundle: about 15 ms); ``True`` (each its own) when this httpx
    has no ``create_ssl_context``."""
    http = http_module(_http_class(sdk, transport))
    make = getattr(http, "create_ssl_context", None)
    return True if make is None else make()


def http_client(sdk: Any, transport: str, connections: int, clients: int, verify: Any) -> Any:
    """A new ``http_client`` for one SDK client, keeping as many connections alive as may
    be in flight through it (httpx keeps 100 by default, so at 200 in flight half would
    reconnect on every call; aiohttp keeps all of them)."""
    http_class = _http_class(sdk, transport)
    http = http_module(http_class)
    keep = -(-connections // clients) + 4
    limits = http.Limits(max_connections=connections, max_keepalive_connections=keep)
    return http_class(limits=limits, verify=verify)


def failure_of(
    exc: BaseException, timed_out: bool, where: str, scrub: Callable[[str], str]
) -> InfrastructureError:
    """A timeout (*timed_out*: httpx's ``TimeoutException``) or request error as a
    retryable failure, named by its root cause: ``timeout`` when the socket timed out,
    ``connection`` when it was refused, reset or closed (whatever class the transport
    mapped that to). *scrub* takes the API key out of the detail."""
    root = _root_cause(exc)
    from_socket = isinstance(root, OSError) or type(root).__module__.startswith("aiohttp")
    if isinstance(root, TimeoutError) or (timed_out and not from_socket):
        return InfrastructureError("timeout", f"no answer from {where}")
    detail = f"{type(root).__name__}: {root}" if str(root) else type(root).__name__
    return InfrastructureError("connection", f"{where}: {scrub(detail)}")


def transport_errors(transport: str) -> tuple[type[BaseException], ...]:
    """Errors of the transport that the SDK lets through unmapped (aiohttp's own, e.g.
    a malformed response), to be retried like a dropped connection."""
    if transport != "aiohttp":
        return ()
    import aiohttp  # only here: the transport is loaded by then

    return (aiohttp.ClientError,)


def _root_cause(exc: BaseException) -> BaseException:
    """The first exception of the chain that led to *exc* (``raise ... from`` links, or
    the exception being handled when there is none)."""
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__
        if nxt is None and not exc.__suppress_context__:
            nxt = exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt
