"""An OpenAI-compatible chat-completions server on 127.0.0.1 that answers after a delay.

    python bench/_openai_server.py [--latency 0.05]

It prints ``listening PORT`` once bound, then answers ``POST .../chat/completions`` with
the last message's text after ``--latency`` seconds (usage counted in words), and
``GET /stats`` with the requests served, the connections open and its own CPU seconds,
so a bench can show the server was not the bottleneck. Run it in its own process: it
must not share the measured client's GIL.

An asyncio Protocol over raw HTTP/1.1 with keep-alive (the approach of the bench
helper's ``bench/server.py``): a request is parsed as its bytes arrive and answered from
a timer, with no coroutine per request, so one core serves many thousands a second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import signal
import time
from typing import Any

STATS = {"requests": 0, "open": 0, "max_open": 0}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _response(status: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


def _completion(request: dict[str, Any]) -> bytes:
    messages = request.get("messages") or [{}]
    text = str(messages[-1].get("content") or "")
    words_in = sum(len(str(m.get("content") or "").split()) for m in messages)
    words_out = len(text.split())
    body = {
        "id": f"chatcmpl-{STATS['requests']}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": words_in,
            "completion_tokens": words_out,
            "total_tokens": words_in + words_out,
        },
    }
    return _response("200 OK", json.dumps(body, separators=(",", ":")).encode())


class _Connection(asyncio.Protocol):
    """One keep-alive connection: each complete request is answered ``latency`` later."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        STATS["open"] += 1
        STATS["max_open"] = max(STATS["max_open"], STATS["open"])

    def connection_lost(self, exc: Exception | None) -> None:
        STATS["open"] -= 1
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            request_line, *headers = self.buffer[:end].decode("latin-1").split("\r\n")
            length = 0
            for line in headers:
                if line[:15].lower() == "content-length:":
                    length = int(line[15:].strip() or 0)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            method, path, _ = request_line.split(" ", 2)
            self._answer(method, path, body)

    def _answer(self, method: str, path: str, body: bytes) -> None:
        if method == "GET" and path.startswith("/stats"):
            if path == "/stats/reset":  # a new measurement: count open connections anew
                STATS["max_open"] = STATS["open"]
            self._send(_response("200 OK", json.dumps({**STATS, "cpu_s": _cpu()}).encode()))
        elif method == "POST" and path.endswith("/chat/completions"):
            STATS["requests"] += 1
            reply = _completion(json.loads(body))
            asyncio.get_running_loop().call_later(self.latency, self._send, reply)
        else:
            error = {"error": {"message": f"no route {method} {path}"}}
            self._send(_response("404 Not Found", json.dumps(error).encode()))

    def _send(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)


async def serve(latency: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(latency), "127.0.0.1", 0, backlog=2048)
    print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before answering")
    asyncio.run(serve(parser.parse_args().latency))


if __name__ == "__main__":
    main()
