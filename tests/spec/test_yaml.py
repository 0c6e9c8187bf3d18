"""The spec's YAML reader: values PyYAML cannot construct are named by file, line and key."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.spec._yaml import parse_yaml


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_yaml(text, "eval.yaml")
    return caught.value.one_line()


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("a: 1\nevaluation: !!int abc\n", ["eval.yaml:2:", "'abc'", "!!int", "'evaluation'"]),
        ("targets:\n  - id: t\n    timeout: !!float x\n", ["eval.yaml:3:", "'timeout'"]),
        # an item of a list: named by the key holding the list
        ("scorers: [1, !!int no]\n", ["eval.yaml:1:", "'no'", "'scorers'"]),
        ("when: !!timestamp 2026-13-99x\n", ["eval.yaml:1:", "!!timestamp"]),
        ("x: !!float\n", ["eval.yaml:1:", "''", "!!float"]),
        ("- !!int abc\n", ["eval.yaml:1:", "'abc'"]),  # no key to name
        ("a: 1\n? [x, y]\n: 2\n", ["eval.yaml:2:", "mapping key", "list"]),
        ("{{a: 1}: 2}\n", ["eval.yaml:1:", "mapping key", "dict"]),
        ("n: " + "7" * 5000 + "\n", ["eval.yaml:1:", "5,000 digits", "'n'"]),
    ],
)
@pytest.mark.doc(
    "docs/spec.md",
    "A value YAML cannot read (`!!int abc`, `!!timestamp nope`, a number of more than 4,300 "
    "digits) and a key that is a list or mapping are one line naming the file, the line, the "
    "text and the key it belongs to",
)
def test_unconstructable_values_name_file_line_and_key(text: str, needles: list[str]) -> None:
    line = _error(text)
    message, dash, hint = line.partition(" — ")
    assert dash and hint
    for needle in needles:
        assert needle in message, (needle, line)
    assert len(line) < 300


@pytest.mark.doc(
    "docs/spec.md",
    "e.g. `eval.yaml:3: 'abc' is not a valid !!int (the value of 'timeout')`.",
)
def test_the_documented_example_reads_as_documented() -> None:
    line = _error("evaluation: x\ntargets:\n  - {id: t, timeout: !!int abc}\n")
    assert line.startswith("eval.yaml:3: 'abc' is not a valid !!int (the value of 'timeout')")


def test_a_long_bad_value_is_quoted_short() -> None:
    line = _error("evaluation: !!int " + "z" * 10_000 + "\n")
    assert "zzz..." in line and len(line) < 300


def test_good_yaml_still_reads() -> None:
    assert parse_yaml("a: !!int 3\nb: [1, 2.5, x]\nc: {d: 2026-01-02}\n", "eval.yaml") == {
        "a": 3,
        "b": [1, 2.5, "x"],
        "c": {"d": __import__("datetime").date(2026, 1, 2)},
    }


def test_a_key_given_twice_is_still_refused() -> None:
    assert "given twice" in _error("a: 1\na: 2\n")
