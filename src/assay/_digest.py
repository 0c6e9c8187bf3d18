"""Canonical JSON and SHA-256: the two primitives every digest in a run is built from.

Canonical JSON is UTF-8, keys sorted, no whitespace. The same value gives the same bytes
on any machine, so a digest written today can be recomputed by an auditor tomorrow.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")
_plain_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def canonical_json(value: Any) -> bytes:
    """Encode *value* as canonical JSON bytes (sorted keys, compact, UTF-8)."""
    return _encoder.encode(value)


def fast_json(value: Any) -> bytes:
    """Encode without sorting: for records whose key order is already fixed by code."""
    return _plain_encoder.encode(value)


def loads(data: bytes | str) -> Any:
    """Decode JSON bytes into plain Python values."""
    return _decoder.decode(data)


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
