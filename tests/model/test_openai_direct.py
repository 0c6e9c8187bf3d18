"""The openai provider's ``direct`` transport (``model/_openai_direct.py``, ``_http1.py``)
against a server on 127.0.0.1 (HTTP, or HTTPS with a certificate of its own) that writes
answers byte for byte as scripted: every way HTTP/1.1 frames a body (length, chunks,
the end of the connection), compressed bodies, interim answers, a server that closes
after answering, an unreadable answer, cookies that expire, a call cancelled while its
answer is on the way, and which certificates HTTPS trusts."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from assay._infra import InfrastructureError
from assay.model import GenerateConfig, get_model
from assay.model._http1 import Connection

BODY = json.dumps(
    {
        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
    }
).encode()


def framed(body: bytes = BODY, *headers: str, status: str = "200 OK") -> bytes:
    """An answer with *body* and its Content-Length."""
    head = [f"HTTP/1.1 {status}", "content-type: application/json", *headers]
    return ("\r\n".join([*head, f"content-length: {len(body)}"]) + "\r\n\r\n").encode() + body


def chunked(body: bytes, *headers: str, size: int = 7) -> bytes:
    head = ["HTTP/1.1 200 OK", "transfer-encoding: chunked", *headers]
    """An answer with *body* in chunks of *size* (the first with an extension), then a
    trailer."""
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    parts = [
        b"%x%s\r\n%s\r\n" % (len(p), b";ext=1" if not n else b"", p) for n, p in enumerate(pieces)
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + b"".join(parts) + b"0\r\nx-t: 1\r\n\r\n"


class RawServer:
    """Answers the n-th request with ``answers[n]`` (bytes, or a function of the
    connection's writer that writes and may close), on 127.0.0.1, in the test's loop."""

    def __init__(self, answers: list[bytes | Callable[[Any], None]], tls: Any = None) -> None:
        self.answers = list(answers)
        self.tls = tls  # an ssl.SSLContext: serve HTTPS
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: Any = None
        self.url = ""
        self._open: list[tuple[Any, Any]] = []  # (writer, handler task)

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for writer, _ in self._open:
            writer.close()
        await asyncio.gather(*(task for _, task in self._open), return_exceptions=True)

    async def _serve(self, reader: Any, writer: Any) -> None:
        self.connections += 1
        self._open.append((writer, asyncio.current_task()))
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                if callable(answer):
                    answer(writer)
                else:
                    writer.write(answer)
                await writer.drain()
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def run(answers: list[Any], calls: int = 1, **config: Any) -> tuple[list[Any], RawServer]:
    """*calls* calls, one after another, to a RawServer; each call's output or error."""
    outcomes: list[Any] = []

    async def main() -> RawServer:
        async with RawServer(answers) as server:
            settings = GenerateConfig(max_retries=0, **config)
            model = get_model("openai/m", settings, base_url=server.url, transport="direct")
            for i in range(calls):
                try:
                    outcomes.append((await model.generate(f"q{i}")).completion)
                except Exception as exc:
                    outcomes.append(exc)
            await model.aclose()
            return server

    return outcomes, anyio.run(main)


def closing(data: bytes) -> Callable[[Any], None]:
    def answer(writer: Any) -> None:
        writer.write(data)
        writer.close()

    return answer


@pytest.mark.parametrize(
    "answer",
    [
        framed(),
        chunked(BODY),
        framed(gzip.compress(BODY), "content-encoding: gzip"),
        chunked(gzip.compress(BODY), "content-encoding: gzip"),
        b"HTTP/1.1 100 Continue\r\n\r\n" + framed(),
        closing(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + BODY),  # to the end
        closing(b"HTTP/1.0 200 OK\r\n\r\n" + BODY),
    ],
    ids=["length", "chunked", "gzip", "chunked-gzip", "interim-100", "until-close", "http-1.0"],
)
def test_every_framing_of_an_answer_is_read(answer: Any) -> None:
    (outcome,), server = run([answer])
    assert outcome == "hi"
    assert b"content-length: " in server.requests[0]


def test_a_server_that_closes_after_answering_gets_a_new_connection() -> None:
    outcomes, server = run([framed(BODY, "connection: close"), framed()], calls=2)
    assert outcomes == ["hi", "hi"]
    assert server.connections == 2
    kept, server = run([framed(), framed()], calls=2)
    assert kept == ["hi", "hi"]
    assert server.connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        framed(b"xx", "content-encoding: br"),
    ],
    ids=["not-http", "bad-status", "coding-not-asked-for"],
)
def test_an_unreadable_answer_is_a_connection_failure(answer: bytes) -> None:
    (failure,), server = run([answer])
    assert isinstance(failure, InfrastructureError), failure
    assert failure.reason == "connection"
    assert f"{server.url}: unreadable answer" in failure.detail


def test_an_error_status_with_a_chunked_body_keeps_its_meaning() -> None:
    error = json.dumps({"error": {"message": "slow down"}}).encode()
    (failure,), _ = run([chunked(error, "retry-after: 3").replace(b"200 OK", b"429 Too Many")])
    assert isinstance(failure, InfrastructureError)
    assert (failure.reason, failure.status, failure.retry_after) == ("rate_limited", 429, 3)
    assert "slow down" in failure.detail


def test_cookies_are_sent_back_until_they_expire() -> None:
    answers = [
        framed(BODY, "set-cookie: a=1; Path=/", "set-cookie: b=2; Max-Age=60"),
        framed(BODY, "set-cookie: a=; Max-Age=0"),
        framed(BODY, "set-cookie: b=3; Expires=Wed, 01 Jan 2020 00:00:00 GMT"),
        framed(),
    ]
    outcomes, server = run(answers, calls=4)
    assert outcomes == ["hi"] * 4
    sent = [
        next((line for line in r.split(b"\r\n") if line.startswith(b"cookie: ")), None)
        for r in server.requests
    ]
    assert sent == [None, b"cookie: a=1; b=2", b"cookie: b=2", None]


def test_a_call_cancelled_mid_answer_drops_its_connection() -> None:
    """A socket whose answer is still coming cannot carry the next request: it would
    read the late answer as its own."""
    half = framed()[:40]

    async def main() -> tuple[list[str], RawServer]:
        async with RawServer([half, framed()]) as server:
            model = get_model("openai/m", base_url=server.url, transport="direct")
            with anyio.move_on_after(60) as scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(model.generate, "q0")
                    while not server.requests:  # the request has reached the server
                        await anyio.sleep(0.01)
                    group.cancel_scope.cancel()
            assert not scope.cancelled_caught
            output = await model.generate("q1")
            await model.aclose()
            return [output.completion], server

    outcomes, server = anyio.run(main)
    assert outcomes == ["hi"]
    assert server.connections == 2


def test_an_answer_arriving_a_byte_at_a_time_is_read_whole() -> None:
    answer = chunked(gzip.compress(BODY), "content-encoding: gzip", size=5)

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        conn = Connection()
        await loop.connect_accepted_socket(lambda: conn, ours)
        waiter = loop.create_future()
        conn.send(b"GET / HTTP/1.1\r\n\r\n", waiter)
        for i in range(len(answer)):
            before = len(conn._buffer)
            theirs.send(answer[i : i + 1])
            while not waiter.done() and len(conn._buffer) == before:  # one read per byte
                await asyncio.sleep(0)
        result = await waiter
        theirs.close()
        conn.close()
        return result

    answer_read = anyio.run(main)
    assert (answer_read.status_code, answer_read.content) == (200, BODY)


def test_an_answer_that_never_comes_is_a_timeout() -> None:
    (failure,), _ = run([lambda writer: None], timeout=0.2)  # never answers
    assert isinstance(failure, InfrastructureError), failure
    assert failure.reason == "timeout"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1, signed by its own key: (certificate, key) files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_https_trusts_ssl_cert_file_and_refuses_an_unknown_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = self_signed(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert_file, key_file)

    async def one_call() -> Any:
        async with RawServer([framed()], tls=served) as server:
            assert server.url.startswith("https://")
            model = get_model("openai/m", GenerateConfig(max_retries=0), base_url=server.url)
            try:
                return (await model.generate("q")).completion
            except InfrastructureError as exc:
                return exc
            finally:
                await model.aclose()

    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # certifi's bundle: not trusted
    refused = anyio.run(one_call)
    assert isinstance(refused, InfrastructureError), refused
    assert refused.reason == "connection"
    assert "SSLCertVerificationError" in refused.detail
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    assert anyio.run(one_call) == "hi"
