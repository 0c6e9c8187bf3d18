"""Backoff between infrastructure retries: exponential, capped, with jitter.

Hand-written on purpose: it is one formula, and the retry loop around it must record
every attempt in the evidence, which a generic retry library would hide from us.
"""

from __future__ import annotations

import random

from assay.spec import RetryPolicy


def backoff_delay(policy: RetryPolicy, failed_attempts: int, rng: random.Random) -> float:
    """Seconds to wait after *failed_attempts* failures: ``min(cap, base·2^(k-1))`` × U(0.5, 1)."""
    ceiling = min(policy.max_backoff, policy.initial_backoff * 2.0 ** (failed_attempts - 1))
    return ceiling * rng.uniform(0.5, 1.0)
