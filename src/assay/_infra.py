"""Infrastructure failures: the exception that means "try again", and how long to wait.

Both retry layers use this module: a trial's attempts (``assay.run``) and a model's
calls (``assay.model``). It sits below both so that dependencies still flow one way.
The backoff is hand-written on purpose: it is one formula, and the loops around it
must record every attempt in the evidence, which a generic retry library would hide.
"""

from __future__ import annotations

import random

MAX_RETRY_AFTER = 600.0
"""The longest ``Retry-After`` honoured, in seconds: a server cannot park a run for hours."""


class InfrastructureError(Exception):
    """The target could not be asked: retry it. ``reason`` is a short, stable label.

    ``status`` is the HTTP status when there was one (429, 503, ...); ``retry_after``
    the wait the server asked for, in seconds.
    """

    def __init__(
        self,
        reason: str,
        detail: str = "",
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        self.reason = reason
        self.detail = detail
        self.retry_after = retry_after
        self.status = status
        super().__init__(f"{reason}: {detail}" if detail else reason)


def backoff_delay(initial: float, cap: float, failed: int, rng: random.Random) -> float:
    """Seconds to wait after *failed* failures: ``min(cap, initial·2^(k-1))`` × U(0, 1).

    Full jitter: calls that failed together (a server restart resets every connection)
    come back spread over the whole interval, not in a second wave at its far half, and
    a call that fails several times in a row waits half as long on average.
    """
    ceiling = min(cap, initial * 2.0 ** (failed - 1))
    return ceiling * rng.random()


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header, in either form (delta-seconds or an HTTP
    date), capped at ``MAX_RETRY_AFTER``; ``None`` when absent or unreadable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        import time  # the date form is rare: its imports stay off assay's start-up
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None

        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)
