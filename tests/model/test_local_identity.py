"""A local model is known by its file's bytes, not only its path: the response cache's
key for ``local/<path>`` changes when another file is put at the same path."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from assay.model import GenerateConfig, get_model
from assay.model._cache_key import cache_key, shown_url
from assay.model._local import file_identity, model_file
from assay.model._messages import user_message

pytest.importorskip("xllamacpp")


def local_key(path: Path) -> tuple[str, str]:
    """The model's base URL and the cache key of one question to it (no server starts)."""
    model = get_model(f"local/{path}")
    url = model.api.base_url  # type: ignore[attr-defined]
    return url, cache_key(model.name, url, [user_message("hi")], None, GenerateConfig())


def test_the_packaged_model_is_named_by_its_digest() -> None:
    path = model_file("smollm2")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    url, _ = local_key(path)
    assert url == f"{path.as_uri()}#sha256={digest}"
    assert shown_url(url) == path.as_uri(), "the digest is not part of what is shown"


def test_another_file_at_the_same_path_is_another_model(tmp_path: Path) -> None:
    copy = tmp_path / "model.gguf"
    shutil.copyfile(model_file("smollm2"), copy)
    first_url, first_key = local_key(copy)
    with open(copy, "r+b") as handle:  # same size, one byte of the weights changed
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last[0] ^ 0xFF]))
    stat = copy.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second_url, second_key = local_key(copy)
    assert first_url != second_url and first_key != second_key
    assert shown_url(first_url) == shown_url(second_url) == copy.as_uri()


def test_the_digest_is_taken_once_per_file_version(tmp_path: Path) -> None:
    path = tmp_path / "x.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 100)
    assert file_identity(str(path)) is file_identity(str(path))  # memoised, not re-hashed
