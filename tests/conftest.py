"""Test-wide fixtures: keep tests from leaking state into each other."""

from __future__ import annotations

import pytest

from assay._messages import set_language


@pytest.fixture(autouse=True)
def _english() -> None:
    """Every test starts in English; a test that switches language is undone here."""
    set_language("en")
