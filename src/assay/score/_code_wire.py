"""The wire between the test driver and the candidate's host: plain data only, one JSON line.

The source of this module is prepended to both ``_code_driver.py`` and ``_code_host.py``
when they are started (each runs as ``python -I -c SOURCE`` in its own sandbox and
imports nothing of assay). What crosses is data, never objects: ``None``, ``bool``,
``int``, ``float``, ``complex``, ``str``, ``bytes``, and ``list``, ``tuple``, ``dict``,
``set`` and ``frozenset`` of them. The driver decodes only these exact types, so a value
the candidate returns cannot bring code with it (an object whose ``__eq__`` always says
yes is refused at the candidate's end: its type is not on the list). Every message is one
line of JSON (strings escape their newlines); the reader refuses a line longer than
``MAX_MESSAGE`` bytes, so a flood costs bounded memory.
"""

from __future__ import annotations

# _json: the C half of the json module, without json itself (``json.decoder`` imports
# and compiles regular expressions: a third of each process's start-up here); binascii,
# not base64, for the same reason
import _json
import binascii
from typing import Any, BinaryIO


class _Parsing:
    """What the C scanner reads off its context (``json.decoder.JSONDecoder``'s fields)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, Any] = {}  # noqa: RUF012 - read by the scanner, never shared state

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


def _unencodable(value: Any) -> Any:
    raise WireError(f"a {type(value).__name__} in a message (encode() makes plain data)")


_scan = _json.make_scanner(_Parsing())  # type: ignore[arg-type]  # any object with the fields
_encode = _json.make_encoder(
    None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
)


def dumps(message: Any) -> str:
    """*message* (JSON-ready data, as ``encode`` makes) as one line of JSON."""
    return "".join(_encode(message, 0))


def loads(text: str) -> Any:
    """The JSON value that is the whole of *text* (surrounding whitespace allowed)."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("no JSON value") from None
    if text[end:].strip():
        raise ValueError("text after the JSON value")
    return value


MAX_MESSAGE = 16 << 20  # bytes in one message line
_SCALARS = (type(None), bool, int, float, str)


class WireError(Exception):
    """A value that cannot cross, or a message that breaks the protocol."""


def encode(value: Any) -> Any:
    """*value* as JSON-ready data: lists as JSON arrays, other containers tagged."""
    if isinstance(value, _SCALARS):
        return _scalar(value)
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, tuple):
        return {"t": [encode(item) for item in value]}
    if isinstance(value, dict):
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return {"f": [encode(item) for item in value]}
    if isinstance(value, set):
        return {"s": [encode(item) for item in value]}
    if isinstance(value, (bytes, bytearray)):
        return {"b": binascii.b2a_base64(bytes(value), newline=False).decode("ascii")}
    if isinstance(value, complex):
        return {"c": [complex(value).real, complex(value).imag]}
    raise WireError(f"a {type(value).__name__} cannot cross to the test driver (plain data only)")


def _scalar(value: Any) -> Any:
    """The builtin value of a scalar (a subclass, e.g. a named int, becomes its base)."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value) if type(value) is not kind else value
    return None


def decode(data: Any) -> Any:
    """The value *data* encodes; only the plain types above are ever built."""
    kind = type(data)
    if kind in _SCALARS:
        return data
    if kind is list:
        return [decode(item) for item in data]
    if kind is dict and len(data) == 1:
        (tag, body), *_ = data.items()
        return _decode_tagged(tag, body)
    raise WireError("a message holds a value of no known kind")


def _decode_tagged(tag: str, body: Any) -> Any:
    if tag == "b" and type(body) is str:
        try:
            return binascii.a2b_base64(body.encode("ascii"))
        except (binascii.Error, UnicodeEncodeError):
            raise WireError("bytes that are not base64") from None
    if tag == "c" and type(body) is list and len(body) == 2:
        real, imag = body
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
    if type(body) is not list:
        raise WireError(f"a tagged value {tag!r} without a list")
    if tag == "t":
        return tuple(decode(item) for item in body)
    if tag == "s":
        return {decode(item) for item in body}
    if tag == "f":
        return frozenset(decode(item) for item in body)
    if tag == "d":
        return {decode(key): decode(value) for key, value in map(_pair, body)}
    raise WireError(f"a tagged value of no known kind {tag!r}")


def _pair(item: Any) -> tuple[Any, Any]:
    if type(item) is not list or len(item) != 2:
        raise WireError("a dict entry that is not a pair")
    return item[0], item[1]


def send(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write *message* as one line and flush it."""
    stream.write(dumps(message).encode("ascii") + b"\n")
    stream.flush()


def receive(stream: BinaryIO) -> dict[str, Any]:
    """The next message; ``EOFError`` when the other end is gone."""
    line = stream.readline(MAX_MESSAGE + 1)
    if not line:
        raise EOFError("the other end closed the pipe")
    if len(line) > MAX_MESSAGE or not line.endswith(b"\n"):
        raise WireError(f"a message longer than {MAX_MESSAGE} bytes")
    try:
        message = loads(line.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise WireError(f"a message that is not JSON ({type(exc).__name__})") from None
    if type(message) is not dict:
        raise WireError("a message that is not an object")
    return message
