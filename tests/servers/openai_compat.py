"""A fault-injecting OpenAI-compatible server on 127.0.0.1, for tests and benchmarks.

It speaks the chat-completions wire format (``POST /v1/chat/completions``, JSON in and
out, HTTP/1.1 keep-alive via ``h11``) and answers each request with the next action of
a script, in arrival order: a normal answer, an HTTP status (429 with ``Retry-After``,
500, 401, ...), a slow answer, a dropped connection, an answer cut off halfway, or a
status 200 whose body is not JSON. When
the script runs out it answers normally. It runs its own asyncio loop in a thread, so
a test can drive it from ``anyio.run`` or from a CLI in a subprocess alike.

    with OpenAICompatServer([status(429, retry_after="0"), drop()]) as server:
        ... openai/NAME with base_url=server.url ...
        server.requests   # what arrived, with the action each one got

The normal answer echoes the last message, calls the first tool (or the one
``tool_choice`` names; none with ``"none"``) when tools are offered and no tool result is
in the conversation yet, and carries log probabilities when asked, and ``n`` choices
when asked (the first's text with `` #2``, `` #3``... after it).
``reply`` replaces the text of the answer (e.g. a calculator); ``reasoning`` adds a
``reasoning_content`` to it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import h11


@dataclass(frozen=True)
class Action:
    """What the server does with one request."""

    kind: str  # "ok" | "status" | "slow" | "drop" | "cut" | "not_json"
    status: int = 200
    message: str = ""
    retry_after: str | None = None
    delay: float = 0.0


def ok() -> Action:
    """Answer normally."""
    return Action("ok")


def status(code: int, message: str = "", retry_after: str | None = None) -> Action:
    """Answer with HTTP *code* and an OpenAI-style error body."""
    return Action("status", code, message or f"scripted {code}", retry_after)


def slow(seconds: float) -> Action:
    """Answer normally after *seconds*."""
    return Action("slow", delay=seconds)


def drop() -> Action:
    """Read the request, then close the connection without answering."""
    return Action("drop")


def cut() -> Action:
    """Send the answer's head and half its body, then close the connection."""
    return Action("cut")


def not_json() -> Action:
    """Answer 200 with a JSON content type and a body that is not JSON."""
    return Action("not_json")


NOT_JSON = b'{"choices": [ not json'
"""The body ``not_json`` sends."""


@dataclass
class Seen:
    """One request as it arrived: its JSON body, its auth header and what it got; its
    target (path and query) and all its headers (names in lower case)."""

    body: dict[str, Any]
    authorization: str | None
    action: Action
    at: float
    in_flight: int
    target: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class OpenAICompatServer:
    """The server; ``url`` is the base URL to give the openai provider (``.../v1``)."""

    script: Iterable[Action] = ()
    reply: Callable[[dict[str, Any]], str] | None = None
    api_key: str | None = None
    models: set[str] | None = None
    latency: float = 0.0
    requests: list[Seen] = field(default_factory=list)
    max_in_flight: int = 0
    open_connections: int = 0
    cookie: str | None = None
    """Sent as ``Set-Cookie`` with every normal answer when set."""
    reasoning: str | None = None
    """Sent as the message's ``reasoning_content`` (as vLLM and llama.cpp do) when set."""
    client_of: Callable[[dict[str, Any]], str] | None = None
    """Names the client a request's JSON body comes from (e.g. a process id the caller
    put in a message); ``max_in_flight_by`` then holds each client's most at once."""
    max_in_flight_by: dict[str, int] = field(default_factory=dict)
    action_for: Callable[[dict[str, Any]], Action | None] | None = None
    """Chooses the action for a request by its JSON body (e.g. by its client) before
    the script does; ``None`` from it: the script's next."""

    def __post_init__(self) -> None:
        self._script: deque[Action] = deque(self.script)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._in_flight = 0
        self._in_flight_by: dict[str, int] = {}
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *actions: Action) -> None:
        """Append actions to the script (from any thread)."""
        with self._lock:
            self._script.extend(actions)

    def _next_action(self) -> Action:
        with self._lock:
            return self._script.popleft() if self._script else ok()

    # --- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> OpenAICompatServer:
        self._thread = threading.Thread(target=self._run, name="openai-compat", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the OpenAI-compatible test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()

    # --- HTTP -----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        self.open_connections += 1
        try:
            while True:
                request = await _read_request(conn, reader)
                if request is None:
                    return
                head, body = request
                if not await self._answer(conn, writer, head, body):
                    return
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError):
            return  # the client hung up, spoke nonsense, or the server is stopping
        finally:
            self.open_connections -= 1
            writer.close()

    async def _answer(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, head: h11.Request, body: bytes
    ) -> bool:
        """Answer one request; ``False`` when the connection was dropped on purpose."""
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        client = self.client_of(json.loads(body or b"{}")) if self.client_of else ""
        now = self._in_flight_by[client] = self._in_flight_by.get(client, 0) + 1
        self.max_in_flight_by[client] = max(self.max_in_flight_by.get(client, 0), now)
        try:
            return await self._act(conn, writer, head, body)
        finally:
            self._in_flight -= 1
            self._in_flight_by[client] -= 1

    async def _act(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, head: h11.Request, body: bytes
    ) -> bool:
        headers = {k.decode().lower(): v.decode() for k, v in head.headers}
        payload = json.loads(body or b"{}")
        chosen = self.action_for(payload) if self.action_for is not None else None
        action = chosen or self._next_action()
        auth, target = headers.get("authorization"), head.target.decode()
        seen = Seen(payload, auth, action, time.monotonic(), self._in_flight, target, headers)
        self.requests.append(seen)
        if action.kind == "drop":
            writer.transport.abort()
            return False
        if action.kind == "slow":
            await asyncio.sleep(action.delay)
        elif self.latency:
            await asyncio.sleep(self.latency)
        code, answer, extra = self._response(action, head, headers, payload)
        data = NOT_JSON if action.kind == "not_json" else json.dumps(answer).encode()
        response_headers = [
            ("content-type", "application/json"),
            ("content-length", str(len(data))),
            *extra,
        ]
        writer.write(conn.send(h11.Response(status_code=code, headers=response_headers)))
        if action.kind == "cut":
            writer.write(data[: len(data) // 2])
            await writer.drain()
            writer.transport.abort()
            return False
        writer.write(conn.send(h11.Data(data=data)))
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        return True

    def _response(
        self, action: Action, head: h11.Request, headers: dict[str, str], payload: dict[str, Any]
    ) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        if action.kind == "status":
            extra = [("retry-after", action.retry_after)] if action.retry_after is not None else []
            return action.status, _error(action.message, action.status), extra
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, _error("invalid key", 401), []
        if not head.target.decode().partition("?")[0].endswith("/chat/completions"):
            return 404, _error(f"no route {head.target.decode()}", 404), []
        model = str(payload.get("model", ""))
        if self.models is not None and model not in self.models:
            return 404, _error(f"model {model!r} not found", 404), []
        cookie = [("set-cookie", self.cookie)] if self.cookie is not None else []
        answer = completion(payload, self.reply)
        if self.reasoning is not None:
            answer["choices"][0]["message"]["reasoning_content"] = self.reasoning
        return 200, answer, cookie


async def _read_request(
    conn: h11.Connection, reader: asyncio.StreamReader
) -> tuple[h11.Request, bytes] | None:
    """The next request and its body, or ``None`` when the client hung up."""
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(65536)
            conn.receive_data(data)
            if not data and head is None:
                return None
            continue
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            return head, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None


def _error(message: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted", "code": code}}


def completion(payload: dict[str, Any], reply: Callable[[dict[str, Any]], str] | None) -> dict:
    """A chat completion answering *payload* (see the module docstring)."""
    messages = payload.get("messages", [])
    last = messages[-1] if messages else {"content": ""}
    message: dict[str, Any] = {"role": "assistant"}
    finish = "stop"
    tools = payload.get("tools") or []
    choice = payload.get("tool_choice", "auto")
    if tools and choice != "none" and not any(m.get("role") == "tool" for m in messages):
        name = (
            choice["function"]["name"] if isinstance(choice, dict) else tools[0]["function"]["name"]
        )
        arguments = json.dumps({"text": last.get("content") or ""})
        message["content"] = None
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
        ]
        finish = "tool_calls"
    elif reply is not None:
        message["content"] = reply(payload)
    elif last.get("role") == "tool":
        message["content"] = f"the tool said: {last.get('content')}"
    else:
        message["content"] = f"echo: {last.get('content')}"
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    if payload.get("logprobs"):
        choice["logprobs"] = _logprobs(message.get("content") or "", payload.get("top_logprobs"))
    words_in = sum(len(str(m.get("content") or "").split()) for m in messages)
    words_out = len(str(message.get("content") or "").split())
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": payload.get("model", ""),
        "choices": [choice, *_more_choices(message, int(payload.get("n") or 1))],
        "usage": {
            "prompt_tokens": words_in,
            "completion_tokens": words_out,
            "total_tokens": words_in + words_out,
        },
    }


def _more_choices(message: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Choices 2..n (``n``): the first's text with `` #2``, `` #3``... after it."""
    text = message.get("content") or ""
    return [
        {"index": i, "message": {**message, "content": f"{text} #{i + 1}"}, "finish_reason": "stop"}
        for i in range(1, n)
    ]


def _logprobs(text: str, top: int | None) -> dict[str, Any]:
    """One entry per word: log probability -0.1·(i+1), and *top* alternatives."""
    content = []
    for i, word in enumerate(text.split()):
        alternatives = [
            {"token": f"{word}~{k}", "logprob": -1.0 - k, "bytes": None} for k in range(top or 0)
        ]
        content.append(
            {"token": word, "logprob": -0.1 * (i + 1), "bytes": None, "top_logprobs": alternatives}
        )
    return {"content": content, "refusal": None}
