"""Test-wide fixtures: keep tests from leaking state into each other."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

from assay._messages import set_language
from tests._isolation import ProcessState
from tests.servers.openai_compat import OpenAICompatServer

pytest_plugins = ["tests._skip_policy"]

# Hypothesis keeps failing examples, patches and a Unicode table under its home folder,
# `.hypothesis/` in the current folder unless told otherwise: never in the checkout.
HYPOTHESIS_HOME = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "assay-tests" / "hypothesis"
)
set_hypothesis_home_dir(HYPOTHESIS_HOME)
# On CI the same examples every run (a red build is reproducible, never a lucky draw) and
# no database; elsewhere a random draw, with failures remembered outside the checkout.
settings.register_profile(
    "assay-ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "assay-dev",
    derandomize=False,  # Hypothesis loads its own CI profile when CI is set at all
    database=DirectoryBasedExampleDatabase(HYPOTHESIS_HOME / "examples"),
)
settings.load_profile("assay-ci" if os.environ.get("CI") else "assay-dev")

# On GitHub Actions every `assay run` appends to the job's summary (docs/cli.md): the
# suite's thousands of runs must not. A test that checks the summary sets its own file.
os.environ.pop("GITHUB_STEP_SUMMARY", None)


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
