"""Test-wide fixtures: keep tests from leaking state into each other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay._messages import set_language
from tests.servers.openai_compat import OpenAICompatServer


@pytest.fixture(autouse=True)
def _english() -> None:
    """Every test starts in English; a test that switches language is undone here."""
    set_language("en")


@pytest.fixture
def openai_server() -> Iterator[OpenAICompatServer]:
    """A fault-injecting OpenAI-compatible server on 127.0.0.1 (push a script to it)."""
    with OpenAICompatServer() as server:
        yield server
