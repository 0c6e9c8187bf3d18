"""Hidden fields (e.g. customer data) are dropped at every depth before anything is written."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.dataset import Sample, drop_fields
from tests.helpers import run_cli, simple_spec, write_module

HIDDEN = ("customer", "email")


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.mark.doc(
    "docs/spec.md",
    "`hidden_fields` names keys (e.g. `customer`) removed, at any depth, from the sample as "
    "it is recorded",
)
def test_to_record_drops_hidden_fields_at_every_depth() -> None:
    sample = Sample(
        id="s1",
        input={
            "amount": 100,
            "customer": {"name": "Ada"},
            "orders": [{"customer": "Ada", "sku": "x"}, [{"email": "a@b", "n": 1}]],
            "deep": {"a": {"b": {"c": {"email": "a@b", "keep": True}}}},
        },
        target={"fee": 0, "customer": "Ada"},
        metadata={"email": "a@b", "source": "crm", "rows": [{"customer": 1}]},
    )
    record = sample.to_record(HIDDEN)
    assert record == {
        "id": "s1",
        "input": {
            "amount": 100,
            "orders": [{"sku": "x"}, [{"n": 1}]],
            "deep": {"a": {"b": {"c": {"keep": True}}}},
        },
        "expected": {"fee": 0},
        "metadata": {"source": "crm", "rows": [{}]},
    }
    assert not _keys(record) & set(HIDDEN)


def test_to_record_does_not_touch_the_sample() -> None:
    sample = Sample(id=1, input={"customer": "Ada", "q": 1}, target={"customer": "Ada"})
    before = copy.deepcopy((sample.input, sample.expected))
    sample.to_record(HIDDEN)
    assert (sample.input, sample.expected) == before


def test_to_record_without_hidden_fields() -> None:
    sample = Sample(id=1, input={"customer": "Ada"}, target="x")
    assert sample.to_record() == {"id": 1, "input": {"customer": "Ada"}, "expected": "x"}
    assert "metadata" not in sample.to_record()


def test_hiding_metadata_drops_it_whole() -> None:
    sample = Sample(id=1, input="q", target="a", metadata={"x": 1})
    assert sample.to_record(("metadata",)) == {"id": 1, "input": "q", "expected": "a"}


def test_values_equal_to_a_hidden_name_are_kept() -> None:
    """Only mapping keys are hidden; a string value that happens to match stays."""
    assert drop_fields(["customer", {"k": "customer"}], HIDDEN) == ["customer", {"k": "customer"}]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["customer", "email", "a", "b", "c"]), children, max_size=4
        )
    ),
    max_leaves=25,
)


@settings(max_examples=200, database=None, deadline=None)
@given(json_values)
def test_drop_fields_leaves_no_hidden_key(value: Any) -> None:
    result = drop_fields(value, HIDDEN)
    assert not _keys(result) & set(HIDDEN)
    assert _keys(result) <= _keys(value)
    assert drop_fields(value, ()) == value
    assert drop_fields(result, HIDDEN) == result


@pytest.mark.doc(
    "docs/spec.md",
    "`hidden_fields` names keys (e.g. `customer`) removed, at any depth, from the sample as "
    "it is recorded: the sample artifact, the bundle's expected value, the reports.",
)
def test_hidden_values_never_reach_the_run_directory(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    write_module(folder, "fees", "def fee(order):\n    return {'fee': order['fee_in']}\n")
    samples = [
        {
            "id": f"o{i}",
            "input": {"fee_in": i, "customer": {"name": f"SECRET-NAME-{i}"}},
            "expected": {"fee": i, "customer": f"SECRET-EXPECTED-{i}"},
            "metadata": {"crm": [{"email": f"SECRET-MAIL-{i}@example.com"}]},
        }
        for i in range(3)
    ]
    path = simple_spec(
        folder,
        samples=samples,
        targets=[{"id": "fees", "callable": "fees:fee"}],
        scorers=[{"type": "field_match", "field": "fee"}],
        hidden_fields=["customer", "email"],
    )
    out = tmp_path / "run"
    proc = run_cli("run", path, "--output", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 5
    for file in files:
        assert b"SECRET-" not in file.read_bytes(), file
    assert run_cli("verify", out).returncode == 0
