"""Test-wide fixtures: keep tests from leaking state into each other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay._messages import set_language
from tests._isolation import ProcessState
from tests.servers.openai_compat import OpenAICompatServer

pytest_plugins = ["tests._skip_policy"]


@pytest.fixture(autouse=True)
def _process_state_put_back() -> Iterator[None]:
    """``sys.path``, ``os.environ``, the working folder, modules a test loaded from its
    own files and assay's registries are as they were before the test (see _isolation)."""
    state = ProcessState.take()
    yield
    state.restore()


@pytest.fixture(autouse=True)
def _english() -> None:
    """Every test starts in English; a test that switches language is undone here."""
    set_language("en")


@pytest.fixture
def openai_server() -> Iterator[OpenAICompatServer]:
    """A fault-injecting OpenAI-compatible server on 127.0.0.1 (push a script to it)."""
    with OpenAICompatServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _own_cache_and_prices(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or fills the user's response cache or sees another test's prices."""
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("ASSAY_PRICES", raising=False)
    monkeypatch.setattr("assay.model._prices._user_prices", {})
