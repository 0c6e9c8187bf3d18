"""The openai provider's ``direct`` transport: chat completions over assay's own
HTTP/1.1 keep-alive pool, without the SDK.

Why: a harness in one Python thread is bound by the CPU of a call. Through the SDK (its
aiohttp client under httpx's interface) a call on loopback costs about 0.45 ms of CPU,
and ``import openai`` with aiohttp about 0.4 s a process; writing a request built once
to a kept-alive socket and parsing the answer as it arrives (``_http1``) costs a tenth
of that (``bench/README.md``, network).

What is sent: the POST to ``BASE_URL/chat/completions`` (with ``default_query``), the
key as ``Authorization: Bearer``, ``OpenAI-Organization`` / ``OpenAI-Project`` when
given, ``default_headers``, and back the cookies the server set. Not the SDK's
``X-Stainless-*`` platform headers: they describe the SDK, which is not sending. What it
does not do: proxies (``pick_transport`` gives a proxied server to the SDK's aiohttp),
HTTP/2, redirects (a 3xx is answered as its status). Failures are named as the SDK
transports name them (``_openai_http.failure_of``): ``timeout`` for a socket that waited
too long, ``connection`` for one refused, reset, cut off or unreadable.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from assay._infra import InfrastructureError
from assay._waiters import Waiters
from assay.model._http1 import Answer, Connection, Dropped, read_buffer

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection when the call has no timeout (the SDK's own default)."""
ANSWER_TIMEOUT = 600.0
"""Seconds to wait for an answer when the call has no timeout (the SDK's default)."""
SWEEP = 0.05
"""Seconds between checks of the busy sockets' deadlines: a call times out up to this
late. One timer a call instead (``loop.call_later`` and its cancel, in a heap of hundreds
of live timers ordered by Python-level comparisons) cost about 5 µs of a call's 45."""


class DirectPost:
    """Up to *connections* sockets to the origin of *url*, kept alive, each carrying one
    request at a time. Made per model; bound to the event loop of its first call (a
    later loop starts a new pool)."""

    def __init__(
        self, url: str, headers: dict[str, str], connections: int, where: str, scrub: Any
    ) -> None:
        parts = urlsplit(url)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.netloc.rpartition("@")[2]
        fixed = {"host": host, "accept": "application/json", "content-type": "application/json"}
        fixed["accept-encoding"] = "gzip, deflate"
        lines = [f"POST {target} HTTP/1.1"]
        lines += [f"{k}: {v}" for k, v in {**fixed, **headers}.items()]
        self._head = ("\r\n".join(lines) + "\r\ncontent-length: ").encode("latin-1")
        self._limit = connections
        self._where = where
        self._scrub = scrub
        self._cookies: dict[str, str] = {}
        self._cookie_line = b""
        self._loop: Any = None
        self._idle: list[Connection] = []
        self._held = 0  # calls holding one of the *connections* sockets (or opening it)
        self._waiting = Waiters()  # calls waiting for one
        self._ssl: Any = None
        self._closed = False
        self._busy: set[Connection] = set()  # awaiting an answer, each with a deadline
        self._sweeper: Any = None  # the timer of the next deadline check
        self._scratch = read_buffer()  # every connection's reads (one loop's)

    async def post(self, body: bytes, timeout: float | None, extra: bytes = b"") -> Answer:
        """The server's answer to *body* (any status), or an ``InfrastructureError``:
        ``timeout`` or ``connection``. *extra* is more header lines for this call alone
        (``extra_headers``), each ending in CRLF."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._start(loop)
        pool = self._waiting  # this loop's (a later loop's pool counts afresh)
        if self._held < self._limit and not pool:  # a free socket: no await
            self._held += 1
        else:
            await pool.wait(self._release)
        try:
            conn = self._reused() or await self._connect(timeout)
            waiter = self._send(loop, conn, body, timeout, extra)
            try:
                answer = await waiter
            except TimeoutError:
                raise InfrastructureError("timeout", f"no answer from {self._where}") from None
            except Dropped as exc:
                raise self._dropped(str(exc)) from None
            except BaseException:  # cancelled mid-answer: the socket is out of step
                conn.close()
                raise
            finally:
                self._busy.discard(conn)
            if conn.reusable and not self._closed:
                self._idle.append(conn)
            else:
                conn.close()
        finally:
            if pool is self._waiting:
                self._release()
        if answer.cookies:
            self._keep_cookies(answer.cookies)
        return answer

    def _send(
        self, loop: Any, conn: Connection, body: bytes, timeout: float | None, extra: bytes
    ) -> asyncio.Future[Answer]:
        """Write one request on *conn*; the future its answer will settle (the socket
        is watched for its deadline meanwhile)."""
        waiter: asyncio.Future[Answer] = loop.create_future()
        size = b"%d\r\n" % len(body)
        conn.send(b"".join((self._head, size, extra, self._cookie_line, b"\r\n", body)), waiter)
        conn.deadline = loop.time() + (ANSWER_TIMEOUT if timeout is None else timeout)
        self._busy.add(conn)
        if self._sweeper is None:
            self._sweeper = loop.call_later(SWEEP, self._sweep)
        return waiter

    def _release(self) -> None:
        """A call is done with its socket: hand the slot to the longest waiter."""
        self._held -= 1
        if self._waiting and self._held < self._limit:
            self._held += 1
            self._waiting.hand_over()

    async def aclose(self) -> None:
        """Close the idle sockets, and each busy one when its answer is in (the provider
        makes a new pool for a later call)."""
        self._closed = True
        if self._sweeper is not None and not self._busy:
            self._sweeper.cancel()
            self._sweeper = None
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        if idle:
            await asyncio.sleep(0)  # let the loop run the closes it just scheduled

    def _start(self, loop: Any) -> None:
        self._loop, self._idle, self._busy, self._sweeper = loop, [], set(), None
        self._scratch = read_buffer()  # not shared with the sockets of an earlier loop
        self._held, self._waiting = 0, Waiters()

    def _sweep(self) -> None:
        """Time out the busy sockets past their deadline; check again while any are
        busy."""
        now = self._loop.time()
        for conn in [c for c in self._busy if c.deadline <= now]:
            conn.expire()
        busy = bool(self._busy) and not self._loop.is_closed()
        self._sweeper = self._loop.call_later(SWEEP, self._sweep) if busy else None

    def _reused(self) -> Connection | None:
        """An idle socket still open, or None."""
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.reusable and not conn.transport.is_closing():
                return conn
        return None

    async def _connect(self, timeout: float | None) -> Connection:
        """A new socket to the server."""
        conn = Connection(self._scratch)
        ssl = self._ssl_context() if self._tls else None
        host = self._host if self._tls else None
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT if timeout is None else timeout):
                await self._loop.create_connection(
                    lambda: conn, self._host, self._port, ssl=ssl, server_hostname=host
                )
        except TimeoutError:
            raise InfrastructureError("timeout", f"no answer from {self._where}") from None
        except OSError as exc:  # refused, unreachable, unknown host, TLS
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise self._dropped(detail) from None
        return conn

    def _dropped(self, detail: str) -> InfrastructureError:
        return InfrastructureError("connection", f"{self._where}: {self._scrub(detail)}")

    def _keep_cookies(self, values: Sequence[str]) -> None:
        """Keep the cookies the server set (one origin, so domain and path do not
        matter); a cookie set to expire now or earlier is forgotten."""
        from email.utils import parsedate_to_datetime
        from http.cookies import CookieError, SimpleCookie

        for value in values:
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value)
            except CookieError:
                continue
            for name, morsel in jar.items():
                if _expired(morsel["max-age"], morsel["expires"], parsedate_to_datetime):
                    self._cookies.pop(name, None)
                else:
                    self._cookies[name] = morsel.value
        line = "; ".join(f"{k}={v}" for k, v in self._cookies.items())
        self._cookie_line = f"cookie: {line}\r\n".encode("latin-1") if line else b""

    def _ssl_context(self) -> Any:
        """One TLS context for the pool, trusting what httpx would (``SSL_CERT_FILE`` or
        ``SSL_CERT_DIR``, else certifi's bundle, else the system's)."""
        if self._ssl is None:
            import ssl

            cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
            if not cafile and not capath:
                try:
                    import certifi

                    cafile = certifi.where()
                except ImportError:
                    pass
            self._ssl = ssl.create_default_context(cafile=cafile or None, capath=capath or None)
            self._ssl.set_alpn_protocols(["http/1.1"])
        return self._ssl


def _expired(max_age: str, expires: str, parse: Any) -> bool:
    """Whether a cookie's ``Max-Age`` or ``Expires`` says it is gone already."""
    import time

    if max_age:
        try:
            return int(max_age) <= 0
        except ValueError:
            return False
    if expires:
        try:
            return bool(parse(expires).timestamp() <= time.time())
        except (TypeError, ValueError):
            return False
    return False


def request_headers(
    key: str,
    organization: str | None,
    project: str | None,
    default_headers: dict[str, str] | None,
    version: str,
) -> dict[str, str]:
    """The headers every call carries, besides host, content type and length."""
    headers = {"authorization": f"Bearer {key}", "user-agent": f"assay/{version}"}
    if organization:
        headers["openai-organization"] = organization
    if project:
        headers["openai-project"] = project
    for name, value in (default_headers or {}).items():
        headers[str(name).lower()] = str(value)
    return headers


def header_problem(headers: dict[str, str]) -> str | None:
    """The name of a header that cannot be sent as given (a line break in it, or a
    character outside Latin-1), or None."""
    for name, value in headers.items():
        text = f"{name}: {value}"
        if "\r" in text or "\n" in text or not name or ":" in name:
            return name
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            return name
    return None
