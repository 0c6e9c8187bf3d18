"""``assay._infra``: the backoff both retry layers use, and reading ``Retry-After``."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from assay._infra import MAX_RETRY_AFTER, backoff_delay, retry_after_seconds


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0", 0.0),
        ("3", 3.0),
        ("1.5", 1.5),
        ("-4", 0.0),
        ("99999", MAX_RETRY_AFTER),
        ("soon", None),
        ("nan", None),
        (None, None),
    ],
)
def test_retry_after_in_seconds(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value) == seconds


def test_retry_after_as_an_http_date() -> None:
    now = 1_800_000_000.0
    when = format_datetime(datetime.fromtimestamp(now + 30, UTC), usegmt=True)
    assert retry_after_seconds(when, now=now) == 30.0
    past = format_datetime(datetime.fromtimestamp(now - 30, UTC), usegmt=True)
    assert retry_after_seconds(past, now=now) == 0.0


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    rng = random.Random(7)
    for failed in range(1, 12):
        ceiling = min(5.0, 0.1 * 2 ** (failed - 1))
        delays = [backoff_delay(0.1, 5.0, failed, rng) for _ in range(50)]
        assert all(0.0 <= d <= ceiling for d in delays)  # full jitter
        assert min(delays) < ceiling * 0.5 < max(delays)
        assert len(set(delays)) > 1  # jittered, not a fixed schedule
