"""The response cache: model answers kept on disk, by the key of everything that decided them.

Why a folder of small JSON files rather than a database: each entry is written once and
read many times, by any number of processes at once. A file named by the key's SHA-256,
written to a temporary name and renamed into place, is atomic on every POSIX file system
without a lock; a reader sees the old entry, the new one, or none. An entry that cannot
be decoded (a torn copy, a hand edit, another version) is a miss, never a crash. No
extra dependency is needed (``diskcache`` would add SQLite locking for no gain here).

Entries hold the model's name, the base URL stripped of any credentials, times, and
the output: never an API key (keys are not part of the key either).

Layout: ``<dir>/<first two hex digits>/<sha256>.json``.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

import msgspec

from assay.errors import ConfigError
from assay.model._cache_key import cache_key, current_epoch, shown_url
from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage
from assay.model._output import ModelOutput

CACHE_ENV = "ASSAY_CACHE_DIR"
DEFAULT_EXPIRY = "7d"
ENTRY_SCHEMA = "assay.cache/1"
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")


class _Named(Protocol):
    name: str
    api: Any


class CacheInfo(msgspec.Struct, frozen=True):
    """What ``assay cache list`` shows of an entry (its output is not decoded)."""

    model: str
    created: float
    expires: float | None
    base_url: str | None = None


class CacheEntry(msgspec.Struct, frozen=True):
    """One cached answer."""

    model: str
    created: float
    expires: float | None
    output: ModelOutput
    base_url: str | None = None
    schema: str = ENTRY_SCHEMA


class Listed(msgspec.Struct, frozen=True):
    """An entry on disk: its file, size and what it says about itself."""

    path: Path
    size: int
    info: CacheInfo | None  # None: unreadable (a miss; ``prune`` removes it)


def parse_expiry(value: str | float | None) -> float | None:
    """Seconds an entry stays fresh: ``30m``, ``12h``, ``1d``, ``2w``, a number of seconds,
    or ``never`` / ``None`` for no expiry."""
    if value is None or value == "never":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if match is None:
            raise ConfigError("cache.expiry", value=value)
        seconds = float(match[1]) * _UNITS[match[2]]
    if not seconds > 0 or seconds == float("inf"):
        raise ConfigError("cache.expiry", value=value)
    return seconds


def default_cache_dir() -> Path:
    """``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay/responses``, else
    ``~/.cache/assay/responses``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assay" / "responses"


class ResponseCache:
    """Model answers on disk under *root*, each fresh for *expiry* seconds (None: always)."""

    def __init__(self, root: Path | None = None, expiry: str | float | None = DEFAULT_EXPIRY):
        self.root = root if root is not None else default_cache_dir()
        self.expiry = parse_expiry(expiry)

    def open(self) -> ResponseCache:
        """Create the folder now, so an unusable one is one line before the run, not later."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if not os.access(self.root, os.W_OK | os.X_OK):
                raise PermissionError("not writable")
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ConfigError("cache.dir", path=str(self.root), reason=reason) from None
        return self

    def key(
        self,
        model: _Named,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]] | None,
        config: GenerateConfig,
    ) -> str:
        """The key of this call to *model*, in the current trial's epoch."""
        base_url = getattr(model.api, "base_url", None)
        url = None if base_url is None else str(base_url)
        return cache_key(model.name, url, messages, tools, config, current_epoch())

    def get(self, key: str) -> ModelOutput | None:
        """The fresh answer stored under *key*, marked ``cached``; ``None`` on any miss."""
        try:
            entry = msgspec.json.decode(self._path(key).read_bytes(), type=CacheEntry)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return None  # absent, or unreadable: a miss either way
        if entry.expires is not None and entry.expires <= time.time():
            return None
        return msgspec.structs.replace(entry.output, cached=True)

    def put(self, key: str, model: _Named, output: ModelOutput) -> None:
        """Store *output* under *key*; a failing disk costs the cache entry, not the call."""
        now = time.time()
        base_url = getattr(model.api, "base_url", None)
        entry = CacheEntry(
            model=model.name,
            created=round(now, 3),
            expires=None if self.expiry is None else round(now + self.expiry, 3),
            output=msgspec.structs.replace(output, cached=False),
            base_url=shown_url(None if base_url is None else str(base_url)),
        )
        with contextlib.suppress(OSError):
            _write_atomic(self._path(key), msgspec.json.encode(entry))

    def entries(self, model: str | None = None) -> Iterator[Listed]:
        """Every entry on disk (those of models matching the glob *model*, if given).

        No folder yet is an empty cache; a path that cannot be a folder (a file there,
        or a file where one of its parents should be) raises, rather than pass for empty.
        """
        try:
            if not stat.S_ISDIR(self.root.stat().st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(self.root))
        except FileNotFoundError:
            return
        for path in sorted(self.root.glob("??/*.json")):
            try:
                data = path.read_bytes()
                info: CacheInfo | None = msgspec.json.decode(data, type=CacheInfo)
            except OSError:
                continue  # removed while we looked
            except (msgspec.DecodeError, msgspec.ValidationError):
                info = None
            if model is not None and (info is None or not fnmatch.fnmatchcase(info.model, model)):
                continue
            yield Listed(path, len(data), info)

    def clear(self, model: str | None = None) -> int:
        """Remove every entry (of models matching *model*); how many were removed."""
        return sum(_remove(e.path) for e in list(self.entries(model)))

    def prune(self) -> int:
        """Remove expired and unreadable entries; how many were removed."""
        now = time.time()
        stale = [
            e.path
            for e in self.entries()
            if e.info is None or (e.info.expires is not None and e.info.expires <= now)
        ]
        return sum(_remove(path) for path in stale)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"


def _write_atomic(path: Path, data: bytes) -> None:
    """Write *data* to *path* by renaming a complete temporary file over it."""
    import tempfile  # deferred: only runs with the cache on write entries

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _remove(path: Path) -> int:
    try:
        path.unlink()
    except FileNotFoundError:
        return 0  # another process removed it first
    return 1


_cache: ContextVar[ResponseCache | None] = ContextVar("assay_cache", default=None)


def current_cache() -> ResponseCache | None:
    """The response cache in force in this context (``None``: caching is off)."""
    return _cache.get()


@contextmanager
def cache_scope(cache: ResponseCache | None) -> Iterator[None]:
    """Answer model calls from *cache* (and fill it) inside the block."""
    token = _cache.set(cache)
    try:
        yield
    finally:
        _cache.reset(token)
