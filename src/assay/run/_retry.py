"""Backoff between a trial's infrastructure retries, from its spec's retry policy."""

from __future__ import annotations

import random

from assay._infra import backoff_delay as _backoff
from assay.spec import RetryPolicy


def backoff_delay(policy: RetryPolicy, failed_attempts: int, rng: random.Random) -> float:
    """Seconds to wait after *failed_attempts* failures: ``min(cap, base·2^(k-1))`` × U(0, 1)."""
    return _backoff(policy.initial_backoff, policy.max_backoff, failed_attempts, rng)
