"""One HTTP/1.1 keep-alive connection that answers one request at a time.

The ``direct`` transport of the openai provider (``_openai_direct``) keeps a pool of
these. A connection is an asyncio ``Protocol``: the request is written in one piece,
the answer is parsed as its bytes arrive (status line, headers, then a body framed by
``Content-Length``, by chunks, or by the end of the connection) and handed to the one
future waiting for it. No coroutine, task or stream object per request: on loopback a
call costs tens of µs here, where an HTTP library's request and response objects cost
hundreds (``bench/README.md``).

It is a ``BufferedProtocol``: the event loop reads into a buffer the pool lends every
connection (``recv_into``). A plain ``Protocol`` is handed a new ``bytes`` of up to
256 KiB per read, which the allocator maps, shrinks and unmaps: three system calls and a
page fault per answer, a third of a call's kernel time.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

MAX_HEAD = 64 * 1024
"""Bytes of status line and headers an answer may take before it is refused."""
READ_SIZE = 64 * 1024
"""Bytes one read may take (a larger answer takes several reads)."""


def read_buffer() -> memoryview:
    """A buffer for the reads of connections driven by one event loop (each read is
    parsed or copied before the loop reads again, so they can share it)."""
    return memoryview(bytearray(READ_SIZE))


class Dropped(Exception):
    """The connection ended, or the answer could not be read, before it was complete."""


class Answer:
    """A complete answer: status, headers (names in lower case; ``set-cookie`` kept apart,
    as it may repeat) and the body, decompressed."""

    __slots__ = ("content", "cookies", "headers", "status_code")

    def __init__(
        self, status: int, headers: dict[str, str], cookies: list[str], content: bytes
    ) -> None:
        self.status_code = status
        self.headers = headers
        self.cookies = cookies
        self.content = content

    @property
    def text(self) -> str:
        """The body as text (UTF-8; bytes that are not are replaced)."""
        return self.content.decode("utf-8", "replace")


class Connection(asyncio.BufferedProtocol):
    """One socket to the server; ``send`` one request, await its answer, then reuse it
    while ``reusable``. Reads land in *scratch* (``read_buffer``; shared only by
    connections of one event loop)."""

    def __init__(self, scratch: memoryview | None = None) -> None:
        self._scratch = read_buffer() if scratch is None else scratch
        self.transport: Any = None
        self.reusable = False  # connected, idle, and the server did not ask to close
        self.deadline = 0.0  # loop time by which the answer must be in (the pool's)
        self._waiter: asyncio.Future[Answer] | None = None
        self._buffer = bytearray()
        self._head: tuple[int, dict[str, str], list[str]] | None = None
        self._body_at = 0
        self._length: int | None = None  # Content-Length; None: chunked or until close
        self._chunked = False
        self._keep = True

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.reusable = True

    def send(self, data: bytes, waiter: asyncio.Future[Answer]) -> None:
        """Write one whole request; its answer (or failure) will settle *waiter*."""
        self.reusable = False
        self._waiter = waiter
        self.transport.write(data)

    def close(self) -> None:
        """Drop the socket (its answer, if one is coming, is not wanted)."""
        self.reusable = False
        if self.transport is not None:
            self.transport.abort()

    def expire(self) -> None:
        """The answer took too long: fail the waiting call and drop the socket (a late
        answer would otherwise be read as the next request's)."""
        self._fail(TimeoutError())
        self.close()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._scratch

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._scratch[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        """Take the next bytes of the answer; settle the waiter once it is whole."""
        if self._waiter is None:  # nothing was asked: the server is out of step
            self.close()
            return
        self._buffer += data
        try:
            answer = self._parse()
        except (ValueError, IndexError, zlib.error) as exc:
            self._fail(Dropped(f"unreadable answer: {exc}"))
            self.close()
            return
        if answer is not None:
            self._settle(answer)

    def eof_received(self) -> bool:
        return False  # close the transport: an answer is never half-duplex here

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        if self._waiter is None or self._waiter.done():
            return
        if self._head is not None and self._length is None and not self._chunked:
            status, headers, cookies = self._head  # a body that runs to the end
            body = _decoded(bytes(self._buffer[self._body_at :]), headers)
            self._settle(Answer(status, headers, cookies, body))
            return
        if exc is None:
            self._fail(Dropped("the server closed the connection before answering"))
        else:
            self._fail(Dropped(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__))

    def _fail(self, exc: BaseException) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _settle(self, answer: Answer) -> None:
        waiter, self._waiter = self._waiter, None
        leftover = len(self._buffer) > 0
        self._buffer.clear()
        self._head, self._length, self._chunked = None, None, False
        self.reusable = self._keep and not leftover and not self.transport.is_closing()
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    def _parse(self) -> Answer | None:
        """The answer if the buffer holds all of it (its bytes then leave the buffer)."""
        buffer = self._buffer
        if self._head is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise ValueError("status line and headers too long")
                return None
            head = self._read_head(bytes(buffer[:end]))
            if head is None:  # 1xx: an interim answer, the real one follows
                del buffer[: end + 4]
                return self._parse()
            self._head, self._body_at = head, end + 4
        status, headers, cookies = self._head
        start = self._body_at
        if self._length is not None:
            if len(buffer) - start < self._length:
                return None
            body = bytes(buffer[start : start + self._length])
            del buffer[: start + self._length]
        elif self._chunked:
            found = _dechunk(buffer, start)
            if found is None:
                return None
            body, end = found
            del buffer[:end]
        else:
            return None  # read until the connection closes
        return Answer(status, headers, cookies, _decoded(body, headers))

    def _read_head(self, head: bytes) -> tuple[int, dict[str, str], list[str]] | None:
        lines = head.decode("latin-1").split("\r\n")
        version, status_text = lines[0].split(" ", 2)[:2]
        if not version.startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1.x answer: {lines[0][:40]!r}")
        status = int(status_text)
        if 100 <= status < 200:
            return None
        headers: dict[str, str] = {}
        cookies: list[str] = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "set-cookie":
                cookies.append(value.strip())
            else:
                headers[name] = value.strip()
        connection = headers.get("connection", "").lower()
        self._keep = "close" not in connection and (
            version != "HTTP/1.0" or "keep-alive" in connection
        )
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        if self._chunked:
            self._length = None
        elif length is not None:
            self._length = int(length)
        elif status in (204, 304):
            self._length = 0
        else:
            self._length, self._keep = None, False
        return status, headers, cookies


def _dechunk(buffer: bytearray, at: int) -> tuple[bytes, int] | None:
    """A chunked body starting at *at*: its bytes and where it ends, or None if the
    buffer does not hold all of it yet."""
    parts: list[bytes] = []
    while True:
        eol = buffer.find(b"\r\n", at)
        if eol < 0:
            return None
        size = int(bytes(buffer[at:eol]).split(b";", 1)[0], 16)
        start = eol + 2
        if size == 0:  # the last chunk, then trailer lines, then an empty line
            end = buffer.find(b"\r\n", start)
            while end > start:  # a trailer line
                start = end + 2
                end = buffer.find(b"\r\n", start)
            return None if end < 0 else (b"".join(parts), end + 2)
        if len(buffer) < start + size + 2:
            return None
        parts.append(bytes(buffer[start : start + size]))
        at = start + size + 2


def _decoded(body: bytes, headers: dict[str, str]) -> bytes:
    """*body* without the content coding the server applied (gzip or deflate, the two
    asked for)."""
    coding = headers.get("content-encoding", "identity").lower()
    if coding in ("identity", ""):
        return body
    if coding == "gzip":
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if coding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:
            return zlib.decompress(body, -zlib.MAX_WBITS)
    raise ValueError(f"content coding {coding!r} was not asked for")
