"""What the providers built on an official SDK (``anthropic``, ``google``) share: the
settings a provider cannot take refused before any trial and again at each call, the
client's default timeout, how an HTTP status is classed, and the key kept out of text.

Kept in one place so the providers cannot drift apart: a status one retries and the
other does not would make the same outage a failed trial on one and a retry on the other.
"""

from __future__ import annotations

from collections.abc import Mapping

from assay._infra import InfrastructureError, retry_after_seconds
from assay.errors import ConfigError
from assay.model._calls import ModelError
from assay.model._config import GenerateConfig

RETRYABLE = frozenset({408, 409, 429})
"""Statuses a retry may fix (besides every 5xx): timeout, conflict, rate limit."""

DEFAULT_TIMEOUT = 600.0
"""Seconds a call may take when the model's config sets no ``timeout``."""


def check_supported(refused: list[str], model: str) -> None:
    """A ConfigError naming the settings *model* cannot take (*refused*), before any
    trial runs."""
    if refused:
        raise ConfigError("model.option_unsupported", model=model, options=", ".join(refused))


def refuse_unsupported(refused: list[str], model: str, api: str) -> None:
    """A ModelError for a call with settings *api* cannot take (set per call, after the
    check at start: a solver's ``generate(config=...)``)."""
    if refused:
        raise ModelError(None, model, f"{api} does not take {', '.join(refused)}; remove it")


def client_timeout(config: GenerateConfig) -> float:
    """The SDK client's timeout: the model's ``timeout``, else ``DEFAULT_TIMEOUT``."""
    return config.timeout if config.timeout is not None else DEFAULT_TIMEOUT


def status_failure(
    status: int, message: str, headers: Mapping[str, str], base_url: str
) -> InfrastructureError | ModelError:
    """InfrastructureError (retried, with ``Retry-After``) for a status a retry may fix,
    ModelError naming the status and the server's *message* for the rest."""
    if status in RETRYABLE or status >= 500:
        retry_after = retry_after_seconds(headers.get("retry-after"))
        reason = "rate_limited" if status == 429 else f"http_{status}"
        return InfrastructureError(reason, message, retry_after, status)
    return ModelError(status, base_url, message)


def scrubbed(text: str, key: str | None) -> str:
    """*text* with the API *key* replaced (a server may echo it in an error)."""
    if key and len(key) >= 4:
        text = text.replace(key, "[key]")
    return text
