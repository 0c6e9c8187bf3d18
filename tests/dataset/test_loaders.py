"""json_dataset and csv_dataset: real files, every mapping, and every error named by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay._messages import set_language
from assay.dataset import FieldSpec, MemoryDataset, Sample, csv_dataset, freeze, json_dataset
from assay.errors import EXIT_CONFIG, ConfigError
from tests.helpers import error_line, has_cjk, run_cli


def _jsonl(tmp_path: Path, *records: object, name: str = "set.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _json(tmp_path: Path, records: object, name: str = "set.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(records, indent=2), encoding="utf-8")
    return path


def _csv(tmp_path: Path, text: str, name: str = "set.csv", bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _error(load: Any, *args: Any, **kwargs: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(*args, **kwargs)
    assert info.value.exit_code == EXIT_CONFIG
    return info.value


# --- the default field mapping ------------------------------------------------------


def test_json_list_with_the_default_fields(tmp_path: Path) -> None:
    path = _json(
        tmp_path,
        [
            {"id": "a", "input": "q1", "target": "x", "choices": ["x", "y"], "setup": "ls"},
            {"input": [{"role": "user", "content": "hi"}], "target": ["t"], "files": {"f": "c"}},
        ],
    )
    dataset = json_dataset(path)
    assert isinstance(dataset, MemoryDataset)
    assert dataset.name == "set"
    assert list(dataset) == [
        Sample(id="a", input="q1", target="x", choices=["x", "y"], setup="ls"),
        Sample(id=2, input=[{"role": "user", "content": "hi"}], target=["t"], files={"f": "c"}),
    ]


def test_jsonl_file_is_read_line_by_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "a", "target": 1}, {"input": "b", "target": 2})
    dataset = json_dataset(path, name="mine")
    assert dataset.name == "mine"
    assert [(s.id, s.input, s.target) for s in dataset] == [(1, "a", 1), (2, "b", 2)]


def test_ndjson_suffix_and_str_paths(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "a"}, name="set.NDJSON")
    assert [s.input for s in json_dataset(str(path))] == ["a"]


def test_unmapped_keys_become_metadata(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "q", "target": "a", "subject": "math", "level": 3})
    (sample,) = json_dataset(path)
    assert sample.metadata == {"subject": "math", "level": 3}


def test_a_metadata_object_is_merged_not_nested(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "q", "metadata": {"k": 1}, "extra": 2})
    (sample,) = json_dataset(path)
    assert sample.metadata == {"k": 1, "extra": 2}


def test_assay_jsonl_files_load_with_expected_as_target(tmp_path: Path) -> None:
    """assay's own JSONL contract says ``expected``; the default mapping reads it."""
    path = _jsonl(tmp_path, {"id": 1, "input": "q", "expected": "a", "metadata": {"k": 1}})
    (sample,) = json_dataset(path)
    assert sample == Sample(id=1, input="q", target="a", metadata={"k": 1})
    assert freeze(json_dataset(path), "set").sample(0) == sample


def test_target_wins_over_expected(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "q", "target": "t", "expected": "e"})
    (sample,) = json_dataset(path)
    assert sample.target == "t"
    assert sample.metadata == {"expected": "e"}


def test_a_missing_target_is_empty(tmp_path: Path) -> None:
    (sample,) = json_dataset(_jsonl(tmp_path, {"input": "q"}))
    assert sample.target == ""


# --- a FieldSpec --------------------------------------------------------------------


def test_field_spec_maps_other_names(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        {"qid": 9, "question": "2+2?", "answer": "4", "opts": ["3", "4"], "src": "x", "n": 1},
    )
    fields = FieldSpec(input="question", target="answer", id="qid", choices="opts")
    (sample,) = json_dataset(path, fields)
    assert sample == Sample(
        id=9, input="2+2?", target="4", choices=["3", "4"], metadata={"src": "x", "n": 1}
    )


def test_field_spec_metadata_list_keeps_only_those_keys(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "q", "a": 1, "b": 2})
    (sample,) = json_dataset(path, FieldSpec(metadata=["a", "absent"]))
    assert sample.metadata == {"a": 1, "absent": None}


def test_custom_target_name_does_not_fall_back_to_expected(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"input": "q", "expected": "e"})
    (sample,) = json_dataset(path, FieldSpec(target="answer"))
    assert sample.target == ""


@pytest.mark.parametrize("blank", [None, ""])
def test_blank_optional_fields_are_unset(tmp_path: Path, blank: object) -> None:
    path = _jsonl(
        tmp_path, {"input": "q", "id": blank, "choices": blank, "files": blank, "setup": blank}
    )
    (sample,) = json_dataset(path)
    assert (sample.id, sample.choices, sample.files, sample.setup) == (1, None, None, None)


# --- a record-to-sample function ----------------------------------------------------


def test_function_builds_samples(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": "a", "n": 2}, {"q": "b", "n": 0}, {"q": "c", "n": 1})

    def build(record: dict[str, Any]) -> list[Sample]:
        return [Sample(input=f"{record['q']}{i}") for i in range(record["n"])]

    dataset = json_dataset(path, build)
    assert [(s.id, s.input) for s in dataset] == [(1, "a0"), (2, "a1"), (3, "c0")]


def test_function_may_return_one_sample(tmp_path: Path) -> None:
    path = _json(tmp_path, [{"q": "a"}])
    (sample,) = json_dataset(path, lambda r: Sample(input=r["q"], id="x"))
    assert sample.id == "x"


def test_function_that_raises_names_the_record(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": "a"}, {"x": 1})
    error = _error(json_dataset, path, lambda r: Sample(input=r["q"]))
    assert error.key == "dataset.record_function"
    assert error.params["line"] == 2
    assert isinstance(error.__cause__, KeyError)
    assert f"{path}:2" in str(error) and "KeyError: 'q'" in str(error)


def test_function_returning_something_else(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": "a"})
    error = _error(json_dataset, path, lambda r: [Sample(input=1), {"input": 1}])
    assert error.key == "dataset.record_result"
    assert "dict" in str(error) and f"{path}:1" in str(error)


def test_function_keeping_nothing(tmp_path: Path) -> None:
    error = _error(json_dataset, _jsonl(tmp_path, {"q": "a"}), lambda r: [])
    assert error.key == "dataset.no_samples"


def test_sample_fields_of_another_kind(tmp_path: Path) -> None:
    error = _error(json_dataset, _jsonl(tmp_path, {"input": "a"}), {"input": "q"})
    assert error.key == "dataset.fields_type"
    assert "dict" in str(error)


# --- ids, shuffle and limit ----------------------------------------------------------


def test_ids_are_numbered_in_file_order_before_the_shuffle(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, *({"input": i} for i in range(20)))
    shuffled = json_dataset(path, shuffle=True, seed=3)
    assert [s.input for s in shuffled] != list(range(20))
    assert all(s.id == s.input + 1 for s in shuffled)
    assert [s.id for s in shuffled] == [s.id for s in json_dataset(path, shuffle=True, seed=3)]


def test_limit_after_shuffle_takes_a_seeded_subset(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, *({"input": i} for i in range(20)))
    whole = json_dataset(path, shuffle=True, seed=5)
    assert list(json_dataset(path, shuffle=True, seed=5, limit=4)) == list(whole[:4])
    assert list(json_dataset(path, limit=(2, 4))) == list(json_dataset(path)[2:4])


def test_csv_takes_shuffle_and_limit(tmp_path: Path) -> None:
    path = _csv(tmp_path, "input\n" + "".join(f"q{i}\n" for i in range(10)))
    dataset = csv_dataset(path, shuffle=True, seed=1, limit=3)
    assert [s.input for s in dataset] == [s.input for s in csv_dataset(path, shuffle=True, seed=1)][
        :3
    ]


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"id": "a", "input": 1}, {"input": 2}, {"id": "a", "input": 3})
    error = _error(json_dataset, path)
    assert error.key == "dataset.duplicate_id"
    assert (error.params["line"], error.params["first"]) == (3, 1)
    assert f"{path}:3" in str(error) and "line 1" in str(error) and "'a'" in str(error)


def test_an_explicit_id_may_collide_with_a_number(tmp_path: Path) -> None:
    path = _json(tmp_path, [{"input": 1}, {"id": "1", "input": 2}])
    error = _error(json_dataset, path)
    assert error.key == "dataset.duplicate_id"
    assert (error.params["line"], error.params["first"]) == (5, 2)


# --- CSV ------------------------------------------------------------------------------


def test_csv_with_the_default_fields(tmp_path: Path) -> None:
    path = _csv(tmp_path, 'id,input,target,subject\n,"two\nlines",4,math\nb,"say ""hi""",,\n')
    dataset = csv_dataset(path)
    assert list(dataset) == [
        Sample(id=1, input="two\nlines", target="4", metadata={"subject": "math"}),
        Sample(id="b", input='say "hi"', target="", metadata={"subject": ""}),
    ]


def test_csv_bom_is_skipped(tmp_path: Path) -> None:
    path = _csv(tmp_path, "input,target\r\nq,a\r\n", bom=True)
    (sample,) = csv_dataset(path)
    assert (sample.input, sample.target, sample.metadata) == ("q", "a", {})


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_csv_delimiter(tmp_path: Path, delimiter: str) -> None:
    path = _csv(tmp_path, f"input{delimiter}target\nq, with comma{delimiter}a\n")
    (sample,) = csv_dataset(path, delimiter=delimiter)
    assert (sample.input, sample.target) == ("q, with comma", "a")


def test_csv_with_field_spec_and_function(tmp_path: Path) -> None:
    path = _csv(tmp_path, "question,answer,a,b\nwhich?,B,x,y\n")
    (mapped,) = csv_dataset(path, FieldSpec(input="question", target="answer", metadata=["a"]))
    assert (mapped.input, mapped.target, mapped.metadata) == ("which?", "B", {"a": "x"})
    (built,) = csv_dataset(
        path, lambda r: Sample(input=r["question"], target=r["answer"], choices=[r["a"], r["b"]])
    )
    assert built.choices == ["x", "y"]


def test_csv_blank_lines_are_skipped_and_lines_are_counted(tmp_path: Path) -> None:
    path = _csv(tmp_path, 'input,target\n\nq1,a\n"multi\nline",a\n\nq3\n')
    error = _error(csv_dataset, path)
    assert error.key == "dataset.csv_cells"
    assert (error.params["line"], error.params["cells"], error.params["columns"]) == (7, 1, 2)
    assert f"{path}:7" in str(error)


def test_csv_row_longer_than_the_header(tmp_path: Path) -> None:
    error = _error(csv_dataset, _csv(tmp_path, "input\nq,extra\n"))
    assert error.key == "dataset.csv_cells"
    assert error.params["line"] == 2


def test_csv_duplicate_header(tmp_path: Path) -> None:
    error = _error(csv_dataset, _csv(tmp_path, "input,x,target,x\nq,1,a,2\n"))
    assert error.key == "dataset.csv_header"
    assert "x" in str(error)


def test_csv_bad_quoting(tmp_path: Path) -> None:
    error = _error(csv_dataset, _csv(tmp_path, 'input\nok\n"a"b\n'))
    assert error.key == "dataset.csv"
    assert error.params["line"] == 3


@pytest.mark.parametrize("text", ["", "input,target\n"], ids=["empty", "header-only"])
def test_csv_without_rows(tmp_path: Path, text: str) -> None:
    error = _error(csv_dataset, _csv(tmp_path, text))
    assert error.key == "dataset.no_samples"
    assert "set.csv" in str(error)


def test_csv_missing_input_column(tmp_path: Path) -> None:
    error = _error(csv_dataset, _csv(tmp_path, "question,target\nq,a\n"))
    assert error.key == "dataset.record_input"
    assert "'input'" in str(error) and ":2:" in str(error)


def test_csv_must_be_utf8(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_bytes("input\nq\ncafé\n".encode("latin-1"))
    error = _error(csv_dataset, path)
    assert error.key == "spec.encoding"
    assert f"{path}:3" in str(error)


# --- JSON errors ---------------------------------------------------------------------


@pytest.mark.parametrize("load", [json_dataset, csv_dataset])
def test_missing_file(tmp_path: Path, load: Any) -> None:
    error = _error(load, tmp_path / "absent.json")
    assert error.key == "spec.unreadable"
    assert "absent.json" in str(error)


def test_a_directory_is_not_a_dataset(tmp_path: Path) -> None:
    error = _error(json_dataset, tmp_path)
    assert error.key == "spec.unreadable"


def test_bad_jsonl_line_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"input": 1}\n\n{"input": \n', encoding="utf-8")
    error = _error(json_dataset, path)
    assert error.key == "dataset.json"
    assert error.params["line"] == 3
    assert str(error).startswith(f"{path}:3: not valid JSON")


def test_bad_json_document_is_named_by_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('[\n  {"input": 1},\n  {"input": }\n]', encoding="utf-8")
    error = _error(json_dataset, path)
    assert error.key == "dataset.json_document"
    assert (error.params["line"], error.params["column"]) == (3, 13)
    assert f"{path}:3:13" in str(error)


@pytest.mark.parametrize(
    ("text", "kind"), [('{"input": 1}', "dict"), ("3", "int"), ("null", "NoneType")]
)
def test_json_document_must_be_a_list(tmp_path: Path, text: str, kind: str) -> None:
    path = tmp_path / "set.json"
    path.write_text(text, encoding="utf-8")
    error = _error(json_dataset, path)
    assert error.key == "dataset.json_list"
    assert kind in str(error)


def test_json_list_records_are_named_by_the_line_they_start_on(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    text = '[{"input": 1}, {"input": 2},\n\n {"input":\n 3}, {"question": 4}]'
    path.write_text(text, encoding="utf-8")
    error = _error(json_dataset, path)
    assert error.key == "dataset.record_input"
    assert error.params["line"] == 4


def test_empty_json_list(tmp_path: Path) -> None:
    assert _error(json_dataset, _json(tmp_path, [])).key == "dataset.no_samples"


@pytest.mark.parametrize("record", [[1, 2], "text", 3, None])
def test_a_record_must_be_an_object(tmp_path: Path, record: object) -> None:
    for path in (_jsonl(tmp_path, {"input": 0}, record), _json(tmp_path, [{"input": 0}, record])):
        error = _error(json_dataset, path)
        assert error.key == "dataset.record_type"
        assert error.params["line"] == (2 if path.suffix == ".jsonl" else 5)


def test_record_without_input_names_line_and_field(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"question": "q"})
    error = _error(json_dataset, path, FieldSpec(input="prompt"))
    assert error.key == "dataset.record_input"
    assert f"{path}:1" in str(error) and "'prompt'" in str(error)


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"input": 1, "id": True}, "id"),
        ({"input": 1, "id": 1.5}, "id"),
        ({"input": 1, "id": [1]}, "id"),
        ({"input": 1, "choices": "A,B"}, "choices"),
        ({"input": 1, "choices": ["A", 2]}, "choices"),
        ({"input": 1, "files": ["a"]}, "files"),
        ({"input": 1, "setup": 3}, "setup"),
    ],
)
def test_field_of_the_wrong_type(tmp_path: Path, record: dict[str, Any], field: str) -> None:
    path = _jsonl(tmp_path, {"input": 0}, record)
    error = _error(json_dataset, path)
    assert error.key == "dataset.record_field"
    assert error.params["field"] == field
    assert f"{path}:2" in str(error)


def test_field_error_names_the_record_key(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"q": 1, "opts": "A"})
    error = _error(json_dataset, path, FieldSpec(input="q", choices="opts"))
    assert "'opts'" in str(error)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_json_bom_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"set{suffix}"
    path.write_bytes(b'\xef\xbb\xbf[{"input": 1}]')
    error = _error(json_dataset, path)
    assert error.key == "spec.encoding"
    assert "byte-order mark" in str(error)


def test_non_utf8_json_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_bytes(b'{"input": 1}\n{"input": "\xff"}\n')
    error = _error(json_dataset, path)
    assert error.key == "spec.encoding"
    assert f"{path}:2" in str(error)


def test_errors_speak_chinese(tmp_path: Path) -> None:
    error = _error(json_dataset, _jsonl(tmp_path, {"question": "q"}))
    set_language("zh")
    assert has_cjk(str(error)) and "set.jsonl" in str(error)


def test_a_gzipped_jsonl_file_is_decompressed_first(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "problems.jsonl.gz"
    lines = [json.dumps({"input": f"q{i}", "target": f"a{i}"}) for i in range(3)]
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    dataset = json_dataset(path)
    assert dataset.name == "problems"
    assert [(s.id, s.input, s.target) for s in dataset] == [
        (1, "q0", "a0"),
        (2, "q1", "a1"),
        (3, "q2", "a2"),
    ]


def test_a_gz_file_that_is_not_gzip_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl.gz"
    path.write_text('{"input": "q"}\n')
    with pytest.raises(ConfigError, match="not gzip") as caught:
        json_dataset(path)
    assert "broken.jsonl.gz" in caught.value.one_line()


DEEP_TASK = """
from assay import Task, task
from assay.dataset import json_dataset
from assay.score import exact


@task
def deep():
    return Task(dataset=json_dataset(DATA), scorer=exact())
"""


def _nested(depth: int) -> str:
    return '{"id": "a", "input": "q", "metadata": {"x": ' + "[" * depth + "]" * depth + "}}"


@pytest.mark.parametrize("name", ["deep.jsonl", "deep.json"])
def test_a_record_nested_2000_deep_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    """As the YAML path says it: RecursionError in the JSON reader was exit 70."""
    record = _nested(2_000)
    (tmp_path / name).write_text(record + "\n" if name.endswith("l") else f"[{record}]")
    (tmp_path / "task.py").write_text(DEEP_TASK.replace("DATA", repr(name)))
    proc = run_cli("run", "task.py@deep", "-o", tmp_path / "run", cwd=tmp_path)
    assert proc.returncode == EXIT_CONFIG, proc.stderr
    line = error_line(proc)
    where = f"{name}:1:" if name.endswith("l") else f"{name}:"
    assert line.startswith(f"assay: {where} not valid JSON") and "nested too deeply" in line
    assert not (tmp_path / "run").exists()  # nothing was run


def test_a_record_nested_500_deep_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(_nested(500) + "\n")
    (sample,) = list(json_dataset(path))
    assert (
        sample.metadata is not None
        and sample.metadata["x"] == json.loads(_nested(500))["metadata"]["x"]
    )
