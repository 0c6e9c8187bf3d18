"""A Gemini ``generateContent`` server on 127.0.0.1, for the ``google`` provider's tests.

It speaks Gemini's REST format (``POST /v1beta/models/<model>:generateContent``, JSON in
and out: ``contents``/``parts``, ``systemInstruction``, ``generationConfig``, ``tools``;
``candidates`` and ``usageMetadata`` back), keeps every request, and answers scripted
replies in order, then an echo of the last user text (or a call of the first tool
declared, when tools are offered and no function response is in the conversation yet).

    with GeminiServer() as server:
        server.reply(429, error_body(429, "RESOURCE_EXHAUSTED"), retry_after="0")
        ... google/NAME with base_url=server.url ...
        server.requests   # what arrived
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.servers._json import send_json


@dataclass
class Seen:
    """One request: its path, headers (names in lower case) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def answer(parts: list[dict[str, Any]], finish: str = "STOP", count: int = 1) -> dict[str, Any]:
    """A ``GenerateContentResponse`` body with *count* candidates of these parts."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": i}
            for i in range(count)
        ],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13},
        "modelVersion": "gemini-test-001",
    }


def error_body(code: int, status: str, message: str = "scripted") -> dict[str, Any]:
    """Google's error body."""
    return {"error": {"code": code, "message": message, "status": status}}


@dataclass
class GeminiServer:
    """The server; ``url`` is the base URL to give the google provider."""

    requests: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._replies: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, status: int, body: dict[str, Any], retry_after: str | None = None) -> None:
        """Answer the next request so (from any thread)."""
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        with self._lock:
            self._replies.append((status, body, headers))

    def _next(self, seen: Seen) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.requests.append(seen)
            if self._replies:
                return self._replies.pop(0)
        return 200, default_answer(seen.body), {}

    def __enter__(self) -> GeminiServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                if not self.path.split("?")[0].endswith(":generateContent"):
                    status, payload, extra = 404, error_body(404, "NOT_FOUND"), {}
                else:
                    status, payload, extra = server._next(Seen(self.path, headers, body))
                send_json(self, status, payload, extra)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def default_answer(body: dict[str, Any]) -> dict[str, Any]:
    """An echo of the last user text, or a call of the first declared function."""
    contents = body.get("contents") or []
    answered = any("functionResponse" in p for c in contents for p in c.get("parts", []))
    declared = [d for t in body.get("tools") or [] for d in t.get("functionDeclarations", [])]
    if declared and not answered:
        call = {"functionCall": {"name": declared[0]["name"], "args": {"city": "Paris"}}}
        return answer([call])
    texts = [p["text"] for p in (contents[-1]["parts"] if contents else []) if "text" in p]
    count = int((body.get("generationConfig") or {}).get("candidateCount") or 1)
    return answer([{"text": f"echo: {' '.join(texts)}"}], count=count)
