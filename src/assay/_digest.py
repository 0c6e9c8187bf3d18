"""Canonical JSON and SHA-256: the two primitives every digest in a run is built from.

Canonical JSON is UTF-8, keys sorted, no whitespace. The same value gives the same bytes
on any machine, so a digest written today can be recomputed by an auditor tomorrow.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")
_plain_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()

# The three below are the encoders' own methods, not functions wrapping them: a trivial
# trial makes about fifteen of these calls, and a Python frame around each cost more
# than some of the encodes (issue 19, item 1).

canonical_json: Callable[[Any], bytes] = _encoder.encode
"""Encode a value as canonical JSON bytes (sorted keys, compact, UTF-8)."""

fast_json: Callable[[Any], bytes] = _plain_encoder.encode
"""Encode without sorting: for records whose key order is already fixed by code."""

fast_json_lines: Callable[[Any], bytes] = _plain_encoder.encode_lines
"""``fast_json`` of each item of an iterable, each followed by a newline (JSON lines)."""

loads: Callable[[bytes | str], Any] = _decoder.decode
"""Decode JSON bytes into plain Python values."""


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of *data*."""
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of *value*."""
    return "sha256:" + hashlib.sha256(_encoder.encode(value)).hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks (memory stays flat for big files)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
