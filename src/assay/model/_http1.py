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
import re
import zlib
from collections.abc import Sequence
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
    as it may repeat) and the body, decompressed. A long head's headers are read from it
    when first asked for (``_framing``): a 2xx answer's caller never does."""

    __slots__ = ("_fields", "_head", "content", "cookies", "status_code")

    def __init__(
        self, status: int, head: bytes, content: bytes, fields: Fields | None, cookies: bool
    ) -> None:
        self.status_code = status
        self._head = head  # status line and header lines, as received
        self._fields = fields  # the headers and cookies, if read already
        self.content = content
        # *cookies*: the head names set-cookie
        self.cookies: Sequence[str] = self._parsed()[1] if cookies else _NONE

    @property
    def headers(self) -> dict[str, str]:
        """The header fields but ``set-cookie``, by lower-case name (the last of a name
        repeated)."""
        return self._parsed()[0]

    @property
    def text(self) -> str:
        """The body as text (UTF-8; bytes that are not are replaced)."""
        return self.content.decode("utf-8", "replace")

    def _parsed(self) -> Fields:
        if self._fields is None:
            self._fields = header_fields(self._head)
        return self._fields


_NONE: tuple[str, ...] = ()
"""The cookies of an answer that sets none (shared, so it cannot be changed)."""

Fields = tuple[dict[str, str], list[str]]
"""The header fields by lower-case name, and the ``set-cookie`` values apart."""


def header_fields(head: bytes) -> Fields:
    """The header lines of *head* (after its status line): the fields by lower-case name,
    and the ``set-cookie`` values apart."""
    return _fields_of(head.decode("latin-1").split("\r\n"))


def _fields_of(lines: list[str]) -> Fields:
    """``header_fields`` of a head split into *lines* (the status line first)."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "set-cookie":
            cookies.append(value.strip())
        else:
            headers[name] = value.strip()
    return headers, cookies


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
        self._status: int | None = None  # of the answer whose head is read
        self._raw_head = b""
        self._fields: Fields | None = None  # its headers, when read line by line
        self._cookies = False  # whether that head names set-cookie
        self._coding = ""  # Content-Encoding, lower case ("" when none)
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
        status = self._status
        if status is not None and self._length is None and not self._chunked:
            body = _decoded(bytes(self._buffer[self._body_at :]), self._coding)
            answer = Answer(status, self._raw_head, body, self._fields, self._cookies)
            self._settle(answer)  # a body that ran to the end
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
        self._status, self._length, self._chunked = None, None, False
        self.reusable = self._keep and not leftover and not self.transport.is_closing()
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    def _parse(self) -> Answer | None:
        """The answer if the buffer holds all of it (its bytes then leave the buffer)."""
        buffer = self._buffer
        status = self._status
        if status is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise ValueError("status line and headers too long")
                return None
            head = bytes(buffer[:end])
            status = self._read_head(head)
            if status is None:  # 1xx: an interim answer, the real one follows
                del buffer[: end + 4]
                return self._parse()
            self._status, self._raw_head, self._body_at = status, head, end + 4
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
        body = _decoded(body, self._coding)
        return Answer(status, self._raw_head, body, self._fields, self._cookies)

    def _read_head(self, head: bytes) -> int | None:
        """The status of *head*, and how its body is framed read; None for an interim
        (1xx) answer."""
        lines = head.decode("latin-1").split("\r\n") if len(head) < SEARCH_FROM else None
        if lines is None:
            eol = head.find(b"\r\n")
            first = (head if eol < 0 else head[:eol]).decode("latin-1")
        else:
            first = lines[0]
        version, status_text = first.split(" ", 2)[:2]
        if not version.startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1.x answer: {first[:40]!r}")
        status = int(status_text)
        if 100 <= status < 200:
            return None
        found = _searched(head) if lines is None else None
        if found is None:  # a short head, or one to read line by line after all
            fields = self._fields = _fields_of(lines or head.decode("latin-1").split("\r\n"))
            get = fields[0].get
            connection, coding = get("connection", "").lower(), get("content-encoding", "")
            chunked, length = get("transfer-encoding", ""), get("content-length")
            self._cookies = bool(fields[1])
        else:
            connection, coding, chunked, length, self._cookies = found
            self._fields = None
        self._coding = coding.lower()
        self._keep = "close" not in connection and (
            version != "HTTP/1.0" or "keep-alive" in connection
        )
        self._chunked = "chunked" in chunked.lower()
        if self._chunked:
            self._length = None
        elif length is not None:
            self._length = int(length)
        elif status in (204, 304):
            self._length = 0
        else:
            self._length, self._keep = None, False
        return status


_FOLDED = re.compile(rb"\r\n[\s\x1c-\x1f\x85\xa0]")
"""A header line starting with what ``str.strip`` takes away (a folded line, or odd)."""


class _Unusual(Exception):
    """A head the byte search cannot read as the header dict would: read it line by
    line."""


SEARCH_FROM = 224
"""Bytes of head from which its framing is found by byte search (``_searched``); a
shorter head is split into lines (``header_fields``), which costs less for a few lines
and more for many: in instructions (callgrind), 21 k for the 3 lines of
``bench/server.py`` (105 bytes) split, 58 k against 42 k searched for an OpenAI-like
14 (479 bytes)."""


def _searched(head: bytes) -> tuple[str, str, str, str | None, bool] | None:
    """``connection`` (lower case), ``content-encoding`` and ``transfer-encoding`` (""
    when absent), ``content-length`` as ``header_fields`` gives them, and whether *head*
    names ``set-cookie``: found by byte search in the lowered head, not by splitting it
    into a dict (the last of a repeated field wins in both). None where the search could
    read a field otherwise than the dict (spaces around a name, a line without a
    colon): the head is then read line by line."""
    lower = head.lower()
    if _FOLDED.search(lower) is not None:
        return None
    try:
        connection = _field(lower, b"\r\nconnection") or ""
        if b"-encoding" in lower:
            coding = _field(lower, b"\r\ncontent-encoding") or ""
            chunked = _field(lower, b"\r\ntransfer-encoding") or ""
        else:
            coding = chunked = ""
        length = _field(lower, b"\r\ncontent-length")
    except _Unusual:
        return None
    return connection, coding, chunked, length, b"set-cookie" in lower


def _field(lower: bytes, name: bytes) -> str | None:
    """The value of the last line of *lower* starting with *name* (CRLF and the field's
    name), stripped; None when there is none."""
    at = lower.rfind(name)
    if at < 0:
        return None
    at += len(name)
    if not lower.startswith(b":", at):  # a longer name, or spaces or no colon after it
        raise _Unusual
    end = lower.find(b"\r\n", at)
    return lower[at + 1 : end if end >= 0 else None].decode("latin-1").strip()


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


def _decoded(body: bytes, coding: str) -> bytes:
    """*body* without the content *coding* the server applied (gzip or deflate, the two
    asked for)."""
    if not coding or coding == "identity":
        return body
    if coding == "gzip":
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if coding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:
            return zlib.decompress(body, -zlib.MAX_WBITS)
    raise ValueError(f"content coding {coding!r} was not asked for")
