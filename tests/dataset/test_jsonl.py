"""JSONL datasets: every line checked once, and every problem named by file and line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from assay.dataset import Dataset, Sample, load_jsonl
from assay.errors import EXIT_CONFIG, ConfigError
from tests.helpers import error_line, run_cli, simple_spec


def _load(tmp_path: Path, data: bytes) -> Dataset:
    path = tmp_path / "set.jsonl"
    path.write_bytes(data)
    return load_jsonl(path, "set.jsonl")


def _error(tmp_path: Path, data: bytes) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, data)
    return info.value


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


@pytest.mark.doc(
    "docs/spec.md",
    "One JSON object a line:",
    "`id` (text or number, unique), `input` (any JSON: what the target is given) and "
    "`expected` (any JSON: what the scorer compares with) are required; `metadata` is "
    "optional.",
)
def test_valid_dataset(tmp_path: Path) -> None:
    data = _lines(
        {"id": "a", "input": "x", "expected": "y"},
        {"id": 2, "input": {"amount": 100}, "expected": {"fee": 0}, "metadata": {"k": [1]}},
        {"id": "c", "input": None, "expected": None},
    )
    dataset = _load(tmp_path, data)
    assert len(dataset) == 3
    assert dataset.ids == ["a", "2", "c"]
    assert dataset.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert dataset.sample(1) == Sample(
        id=2, input={"amount": 100}, target={"fee": 0}, metadata={"k": [1]}
    )
    assert [s.id for s in dataset] == ["a", 2, "c"]
    assert dataset.sample(2).expected is None


def test_blank_lines_and_crlf_are_fine_and_lines_count_from_one(tmp_path: Path) -> None:
    data = b'\r\n{"id": 1, "input": "a", "expected": "a"}\r\n\n  \n{"id": 2, "input": 1}\r\n'
    error = _error(tmp_path, data)
    assert error.key == "dataset.sample"
    assert error.params["line"] == 5
    assert "set.jsonl:5" in error.one_line()


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    data = _lines({"id": 1, "input": "a", "expected": "a"}) + b'{"id": 2, "input": \n'
    error = _error(tmp_path, data)
    assert error.key == "dataset.json"
    assert error.exit_code == EXIT_CONFIG
    assert error.one_line().startswith("set.jsonl:2: not valid JSON")


def test_invalid_json_through_the_cli(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    data = tmp_path / "data.jsonl"
    data.write_bytes(data.read_bytes() + b"{not json}\n")
    proc = run_cli("run", path, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    assert "data.jsonl:4" in error_line(proc)
    assert not (tmp_path / "run").exists()


@pytest.mark.doc(
    "docs/spec.md",
    "`id` (text or number, unique)",
)
def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    data = _lines(
        {"id": "a", "input": 1, "expected": 1},
        {"id": "b", "input": 1, "expected": 1},
        {"id": "a", "input": 2, "expected": 2},
    )
    error = _error(tmp_path, data)
    assert error.key == "dataset.duplicate_id"
    assert error.params["line"] == 3
    assert error.params["first"] == 1
    text = error.one_line()
    assert "set.jsonl:3" in text and "line 1" in text and "'a'" in text


@pytest.mark.parametrize("data", [b"", b"\n", b"\n   \n\r\n"], ids=["empty", "newline", "blank"])
def test_empty_dataset(tmp_path: Path, data: bytes) -> None:
    error = _error(tmp_path, data)
    assert error.key == "dataset.empty"
    assert "set.jsonl" in error.one_line()


def test_empty_dataset_through_the_cli(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    (tmp_path / "data.jsonl").write_bytes(b"")
    proc = run_cli("run", path, "--output", tmp_path / "run")
    assert proc.returncode == EXIT_CONFIG
    assert "data.jsonl" in error_line(proc)


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ({"id": 1, "input": "a"}, "expected"),
        ({"id": 1, "expected": "a"}, "input"),
        ({"input": "a", "expected": "a"}, "id"),
        ({"id": 1, "input": "a", "expected": "a", "answer": "a"}, "answer"),
        ({"id": 1, "input": "a", "expected": "a", "metadata": [1]}, "metadata"),
    ],
    ids=["missing-expected", "missing-input", "missing-id", "unknown-field", "bad-metadata"],
)
@pytest.mark.doc(
    "docs/spec.md",
    "`id` (text or number, unique), `input` (any JSON: what the target is given) and "
    "`expected` (any JSON: what the scorer compares with) are required; `metadata` is "
    "optional.",
)
def test_bad_sample_names_field_and_line(
    tmp_path: Path, record: dict[str, object], needle: str
) -> None:
    data = _lines({"id": 0, "input": "a", "expected": "a"}, record)
    error = _error(tmp_path, data)
    assert error.key == "dataset.sample"
    assert error.params["line"] == 2
    text = error.one_line()
    assert "set.jsonl:2" in text and needle in text


@pytest.mark.parametrize("line", [b"[1, 2]", b'"text"', b"3", b"null"])
@pytest.mark.doc(
    "docs/spec.md",
    "One JSON object a line:",
)
def test_a_line_must_be_an_object(tmp_path: Path, line: bytes) -> None:
    error = _error(tmp_path, line + b"\n")
    assert error.key == "dataset.sample"
    assert "set.jsonl:1" in error.one_line()


def test_int_and_str_ids(tmp_path: Path) -> None:
    dataset = _load(
        tmp_path,
        _lines({"id": 7, "input": 1, "expected": 1}, {"id": "8", "input": 1, "expected": 1}),
    )
    # Ids are planned as text, and each sample keeps its own type for the record.
    assert dataset.ids == ["7", "8"]
    assert dataset.sample(0).to_record()["id"] == 7
    assert dataset.sample(1).to_record()["id"] == "8"


@pytest.mark.parametrize(("first", "second"), [(1, "1"), ("1", 1)])
def test_int_and_str_spelling_of_one_id_collide(
    tmp_path: Path, first: object, second: object
) -> None:
    """1 and "1" would plan the same trial ids, so they are one id used twice."""
    data = _lines(
        {"id": first, "input": 1, "expected": 1}, {"id": second, "input": 2, "expected": 2}
    )
    error = _error(tmp_path, data)
    assert error.key == "dataset.duplicate_id"
    assert (error.params["line"], error.params["first"]) == (2, 1)


@pytest.mark.parametrize("bad_id", [True, 1.5, None, [1], {"a": 1}])
@pytest.mark.doc(
    "docs/spec.md",
    "`id` (text or number, unique)",
)
def test_ids_are_text_or_integers_only(tmp_path: Path, bad_id: object) -> None:
    error = _error(tmp_path, _lines({"id": bad_id, "input": 1, "expected": 1}))
    assert error.key == "dataset.sample"
    assert "id" in error.one_line()


def test_non_utf8_line_is_named(tmp_path: Path) -> None:
    data = _lines({"id": 1, "input": "a", "expected": "a"}) + b'{"id": 2, "input": "\xff"}\n'
    error = _error(tmp_path, data)
    assert error.key == "spec.encoding"
    assert "set.jsonl:2" in error.one_line()


def test_bom_is_refused(tmp_path: Path) -> None:
    error = _error(tmp_path, b"\xef\xbb\xbf" + _lines({"id": 1, "input": "a", "expected": "a"}))
    assert error.key == "spec.encoding"
    assert "byte-order mark" in error.one_line()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_jsonl(tmp_path / "absent.jsonl", "absent.jsonl")
    assert info.value.key == "spec.unreadable"
    assert "absent.jsonl" in info.value.one_line()


def test_samples_are_read_back_from_the_scratch_file_as_written(tmp_path: Path) -> None:
    """The lines live in a scratch file, not in memory: every sample, in any order, and
    the digest of the whole file (no newline at its end here) are as in the file."""
    records = [
        {"id": f"s{i}", "input": {"n": i, "text": "é" * (i % 7)}, "expected": i}
        for i in range(2_000)
    ]
    data = _lines(*records).rstrip(b"\n")
    dataset = _load(tmp_path, data)
    assert dataset.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert list(dataset.ids) == [r["id"] for r in records]
    for i in (1_999, 0, 1_000, 7):  # by position, in any order
        assert dataset.sample(i).to_record() == records[i]
    assert [s.input for s in dataset] == [r["input"] for r in records]
