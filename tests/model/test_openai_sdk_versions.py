"""The OpenAI SDK releases assay supports, pinned: ``model/_openai_request.py`` uses two
private names of the SDK (``openai._models.FinalRequestOptions`` and
``AsyncOpenAI._build_request``), so the ``openai`` extra's range and ``TESTED_WITH`` are
kept in step with the SDK this suite runs against. A newer SDK installed here fails the
first test until the suite has passed with it and ``TESTED_WITH`` says so; a range in
pyproject that admits an untested major fails the second."""

from __future__ import annotations

import importlib.metadata
import tomllib

import openai
from packaging.requirements import Requirement
from packaging.version import Version

from assay.model._openai_request import TESTED_WITH, PreparedPost
from tests.helpers import REPO


def openai_requirement() -> Requirement:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (line,) = [line for line in extras["openai"] if Requirement(line).name == "openai"]
    return Requirement(line)


def test_the_sdk_under_test_is_in_the_supported_range_and_not_newer_than_tested() -> None:
    installed = Version(importlib.metadata.version("openai"))
    assert installed in openai_requirement().specifier
    assert installed <= Version(TESTED_WITH)
    PreparedPost.check_sdk("openai/x", openai)  # both private names are there


def test_the_supported_range_stops_before_the_next_untested_major() -> None:
    specifier = openai_requirement().specifier
    tested = Version(TESTED_WITH)
    assert tested in specifier
    assert Version(f"{tested.major + 1}.0.0") not in specifier
    assert Version("1.40.0") in specifier and Version("1.39.0") not in specifier
