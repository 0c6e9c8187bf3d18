"""The openai provider's per-call shortcuts give the bytes and values of the long way:
the request body put together from parts kept per model and config (``encode_request``)
against the one encoded from ``request_params``' dict; the answer head read by byte
search (``_http1._framing``) against the header dict; the lazy ``Answer.headers``; an
answer with several choices parsed into ``alternatives``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from assay.model import ChatMessage, GenerateConfig
from assay.model._config import ResponseSchema
from assay.model._content import ContentImage, ContentText
from assay.model._http1 import SEARCH_FROM, Answer, Connection, header_fields
from assay.model._messages import ToolCall
from assay.model._openai_wire import encode_request, parse_completion, request_params

TEXT = [ChatMessage("system", "be brief"), ChatMessage("user", 'say "héllo"')]
TOOL_TURN = [
    *TEXT,
    ChatMessage("assistant", "", [ToolCall("c1", "add", {"a": 1})]),
    ChatMessage("tool", "2", tool_call_id="c1"),
]
PARTS = [ChatMessage("user", [ContentText("look"), ContentImage("data:image/png;base64,AA")])]
EMPTY_CALLS = [ChatMessage("assistant", "ok", [])]  # an empty list is not sent
LISTED = [ChatMessage("user", [ContentText("a"), ContentText("b")])]  # text parts: joined
SCHEMA = ResponseSchema(name="answer", json_schema={"type": "object"})
CONFIGS = [
    GenerateConfig(),
    GenerateConfig(temperature=0.5, max_tokens=10, stop=["x"], seed=3),
    GenerateConfig(logprobs=True, top_logprobs=2, num_choices=2, response_schema=SCHEMA),
    GenerateConfig(temperature=0.5, extra_body={"temperature": 1.0, "x": [1]}),  # in place
    GenerateConfig(extra_body={"model": "other", "y": 1}),  # model's place kept
    GenerateConfig(extra_body={"messages": []}),
    GenerateConfig(extra_body={}),
    GenerateConfig(seed=1, logprobs=True, extra_body={"z": 1, "seed": 2}),
]
TOOL = {"name": "add", "description": "adds", "parameters": {"type": "object"}}


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
@pytest.mark.parametrize("messages", [TEXT, TOOL_TURN, PARTS, EMPTY_CALLS, LISTED])
@pytest.mark.parametrize("tools", [[], [TOOL]], ids=["no-tools", "tools"])
def test_the_body_is_the_encoded_request_params(
    config: GenerateConfig, messages: list[ChatMessage], tools: list[dict[str, Any]]
) -> None:
    expected = msgspec.json.encode(request_params("m1", messages, tools, config))
    assert encode_request("m1", messages, tools, config) == expected
    assert encode_request("m1", messages, tools, config) == expected  # the kept parts
    other = msgspec.json.encode(request_params("m2", messages, tools, config))
    assert encode_request("m2", messages, tools, config) == other  # another model


HEADS = [
    "HTTP/1.1 200 OK",
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5",
    "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 5\r\nConnection: Keep-Alive\r\nSet-Cookie: a=1",
    "HTTP/1.1 200 OK\r\nx-set-cookie: a=1",  # names it, sets none
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\nContent-Encoding: GZIP",
    "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length:   7  ",  # the last wins
    "HTTP/1.1 200 OK\r\ncontent-length : 5\r\nconnection: close",  # space before colon
    "HTTP/1.1 200 OK\r\nx: a\r\n content-length: 5",  # a folded line
    "HTTP/1.1 200 OK\r\n\tconnection: close\r\ncontent-length: 4",
    "HTTP/1.1 200 OK\r\n\x0bcontent-length: 6",  # what str.strip takes
    "HTTP/1.1 200 OK\r\ncontent-length\r\nconnection: close",  # no colon
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-lengthy: 9",  # a longer name last
    "HTTP/1.1 200 OK\r\ncontent-length-x: 9\r\ncontent-length: 5",
    "HTTP/1.1 200 OK\r\nx-encoding: br\r\ncontent-length:5",
    "HTTP/1.0 200 OK\r\nconnection:keep-alive\r\ncontent-length: 2\r\nx: a:b",
]


PAD = "\r\nx-pad: " + "p" * SEARCH_FROM  # a head this long is read by byte search


def framing_of(head: bytes) -> tuple[Any, ...]:
    """The framing the header dict gives (the reading before the byte search)."""
    fields, cookies = header_fields(head)
    version = head.decode("latin-1").split(" ")[0]
    connection = fields.get("connection", "").lower()
    keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
    chunked = "chunked" in fields.get("transfer-encoding", "").lower()
    length = fields.get("content-length")
    try:
        size = None if chunked else int(length) if length is not None else None
    except ValueError:
        return ("unreadable",)
    keep = keep and (chunked or length is not None)
    coding = fields.get("content-encoding", "").lower()
    return keep, chunked, size, coding, bool(cookies)


@pytest.mark.parametrize("pad", ["", PAD], ids=["short", "long"])
@pytest.mark.parametrize("text", HEADS, ids=range(len(HEADS)))
def test_the_framing_read_by_search_is_the_header_dicts(text: str, pad: str) -> None:
    line, _, rest = text.partition("\r\n")
    head = (line + pad + ("\r\n" + rest if rest else "")).encode("latin-1")
    conn = Connection()
    try:
        conn._read_head(head)
    except ValueError:
        found: tuple[Any, ...] = ("unreadable",)
    else:
        found = (conn._keep, conn._chunked, conn._length, conn._coding, conn._cookies)
    expected = framing_of(head)
    if found[-1] and not expected[-1]:  # names set-cookie without setting one
        found = (*found[:-1], False)
    assert found == expected


def test_an_answers_headers_are_read_when_asked_for() -> None:
    head = b"HTTP/1.1 429 Slow\r\nRetry-After: 3\r\nSet-Cookie: a=1\r\nset-cookie: b=2"
    answer = Answer(429, head, b"{}", None, True)
    assert answer.headers == {"retry-after": "3"}
    assert answer.cookies == ["a=1", "b=2"]
    assert Answer(200, b"HTTP/1.1 200 OK\r\nX: 1", b"", None, False).cookies == ()


def test_several_choices_become_alternatives() -> None:
    body = msgspec.json.encode(
        {
            "model": "m",
            "choices": [
                {"message": {"content": "a"}, "finish_reason": "stop"},
                {"message": {"content": "b", "reasoning": "r"}, "finish_reason": "length"},
            ],
        }
    )
    output = parse_completion(body, "fallback")
    assert (output.completion, output.stop_reason, output.model) == ("a", "stop", "m")
    (other,) = output.alternatives or []
    assert (other.message.text, other.stop_reason) == ("b", "max_tokens")
    single = parse_completion(b'{"choices":[{"message":{"content":"x"}}]}', "fb")
    assert (single.completion, single.alternatives, single.model) == ("x", None, "fb")
    assert single.stop_reason == "unknown"
