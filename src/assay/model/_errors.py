"""Interim: what the providers of this branch share until the ``openai`` branch lands.

That branch brings ``assay._infra`` (InfrastructureError with ``status``, Retry-After
parsing), ``ModelError`` and ``check_base_url``; this module is replaced by imports of
those when it is merged.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from assay.errors import ConfigError
from assay.target import InfrastructureError as _Infra


class InfrastructureError(_Infra):
    """InfrastructureError with the HTTP status it came from."""

    def __init__(
        self,
        reason: str,
        detail: str = "",
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(reason, detail, retry_after)
        self.status = status


class ModelError(Exception):
    """A model refused a call for a reason no retry fixes (400, 401, 404, ...)."""

    def __init__(self, status: int | None, where: str, message: str) -> None:
        self.status, self.where, self.detail = status, where, message
        head = f"{status} from {where}" if status is not None else f"error from {where}"
        super().__init__(f"{head}: {message}" if message else head)


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a delta-seconds ``Retry-After`` header, capped at 600."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return min(max(seconds, 0.0), 600.0) if seconds == seconds else None


def check_base_url(model: str, url: str) -> str:
    """*url* without a trailing slash; a ConfigError unless it is a plain http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.password:
        raise ConfigError("spec.shape", path=model, reason=f"base_url {url!r} is not valid")
    return url.rstrip("/")
