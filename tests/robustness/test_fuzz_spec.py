"""Hypothesis fuzzes the spec loader with random YAML-ish documents: it must answer
with one ``ConfigError`` line, never crash with another exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError
from assay.spec import load_spec
from tests.robustness._corpus_base import ANSWERS, BASE, GOOD, TEXT

KEYS = [
    *BASE,
    "repetitions",
    "gate",
    "retry",
    "hidden_fields",
    "description",
    "id",
    "type",
    "callable",
    "script",
    "argv",
    "args",
    "timeout",
    "max_output_bytes",
    "field",
    "pattern",
    "ignore_case",
    "minimum",
    "targets",
    "scorer",
    "max_attempts",
    "initial_backoff",
    "max_backoff",
    "url",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, width=32),
    TEXT,
    st.sampled_from(["data.jsonl", "answers:echo", "exact", "regex", "t", "../x", "/etc", ".*"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), TEXT), inner, max_size=5),
    ),
    max_leaves=20,
)
DOCUMENTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8)


@pytest.fixture(scope="module")
def fuzz_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-spec")
    (folder / "data.jsonl").write_bytes(GOOD)
    (folder / "answers.py").write_text(ANSWERS)
    return folder


def _load_or_config_error(path: Path) -> None:
    try:
        load_spec(path)
    except ConfigError as exc:
        line = exc.one_line()
        assert "\n" not in line and line.strip()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS)
@example(document={"gate": {"\n": None}})  # a key with a line break: still one line
def test_fuzz_the_spec_loader_with_random_documents(fuzz_folder: Path, document: Any) -> None:
    path = fuzz_folder / "fuzz.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    _load_or_config_error(path)


YAMLISH = st.lists(
    st.sampled_from(
        [
            "evaluation:",
            "dataset:",
            "targets:",
            "scorers:",
            " - ",
            "  ",
            "id: t",
            "type: exact",
            "callable: answers:echo",
            "data.jsonl",
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "'",
            '"',
            "&a",
            "*a",
            "!!str",
            "!!int",
            "!!float",
            "!!timestamp",
            "abc",
            "#",
            "---",
            "\n",
            "\t",
            "- ",
            "? ",
            "|",
            ">",
            "%",
            "@",
            "é",
            "1",
            "-1",
            "0.5",
            "null",
            "true",
            "~",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=YAMLISH)
def test_fuzz_the_spec_loader_with_yamlish_text(fuzz_folder: Path, text: str) -> None:
    path = fuzz_folder / "fuzz-text.yaml"
    path.write_text(text, encoding="utf-8")
    _load_or_config_error(path)
