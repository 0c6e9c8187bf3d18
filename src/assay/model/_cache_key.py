"""The key of a cached response: everything that decides what the model answers.

The key binds the provider and the model's name (one model's answers are never handed
to another), the base URL the provider talks to (the same name served by two endpoints
is two models), the messages, the tool schemas, the generation settings that change the
answer, and, when sampling is not deterministic, the epoch of the trial, so each epoch
gets its own sample rather than a copy of the first one's.
"""

from __future__ import annotations

from typing import Any

import msgspec

from assay._digest import canonical_json, sha256_hex
from assay.model._bound import BoundScope, bound_now
from assay.model._config import GenerateConfig
from assay.model._messages import ChatMessage

KEY_VERSION = 1

NOT_IN_KEY = frozenset({"max_connections", "max_retries", "timeout"})
"""Generation settings that change how a call is made, not what it answers."""


def cache_key(
    model: str,
    base_url: str | None,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]] | None,
    config: GenerateConfig,
    epoch: int | None = None,
) -> str:
    """Hex SHA-256 naming the response to this call.

    *model* is ``provider/name``; *epoch* counts only when ``config`` is not
    deterministic (at temperature 0 every epoch may share one answer).
    """
    settings = {k: v for k, v in msgspec.to_builtins(config).items() if k not in NOT_IN_KEY}
    material = {
        "version": KEY_VERSION,
        "provider": model.partition("/")[0],
        "model": model,
        "base_url": base_url,
        "messages": messages,
        "tools": tools or [],
        "config": settings,
        "epoch": None if config.deterministic else epoch,
    }
    return sha256_hex(canonical_json(material))


def current_epoch() -> int | None:
    """The epoch of the trial running in this context, if any."""
    return bound_now().epoch


def epoch_scope(epoch: int) -> BoundScope[int]:
    """Make *epoch* the current trial's epoch inside the block (set by the solver target)."""
    return BoundScope("epoch", epoch)


def shown_url(url: str | None) -> str | None:
    """*url* without user, password, query or fragment: what may be written to disk."""
    from urllib.parse import urlsplit, urlunsplit  # deferred: only cache writes need it

    if not url:
        return url
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
