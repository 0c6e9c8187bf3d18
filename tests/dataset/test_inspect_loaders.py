"""Inspect's loader options: file_dataset, auto_id, shuffle_choices (argument and method).

Written as an Inspect task writes them: ``file_dataset("x.csv", FieldSpec(...),
auto_id=True, shuffle_choices=42)``, ``dataset.shuffle_choices(seed=1)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.dataset import (
    FieldSpec,
    MemoryDataset,
    Sample,
    csv_dataset,
    file_dataset,
    freeze,
    json_dataset,
    select,
)
from assay.errors import EXIT_CONFIG, ConfigError
from tests.helpers import error_line, run_cli

QUESTIONS = [
    {"id": "a", "question": "Red fruit?", "options": ["pear", "apple", "lime"], "answer": "B"},
    {"id": "b", "question": "Sour fruit?", "options": ["lime", "fig", "date"], "answer": "A"},
    {"id": "c", "question": "Both?", "options": ["x", "y", "z", "w"], "answer": ["A", "D"]},
]
FIELDS = FieldSpec(input="question", target="answer", choices="options")


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _right_answers(samples: MemoryDataset) -> dict[object, list[str]]:
    """Each sample's right choices, read through its target letters."""
    found = {}
    for sample in samples:
        assert sample.choices is not None
        letters = sample.target if isinstance(sample.target, list) else [sample.target]
        found[sample.id] = sorted(sample.choices[ord(t) - ord("A")] for t in letters)
    return found


# -- file_dataset ------------------------------------------------------------------------


def test_file_dataset_reads_csv_json_and_jsonl_by_extension(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("question,answer\nOne?,1\nTwo?,2\n", encoding="utf-8")
    (tmp_path / "q.json").write_text(json.dumps([{"question": "One?", "answer": "1"}]))
    _jsonl(tmp_path / "q.jsonl", [{"question": "One?", "answer": "1"}])
    fields = FieldSpec(input="question", target="answer")
    csv_samples = file_dataset(tmp_path / "q.csv", fields)
    assert [(s.input, s.target) for s in csv_samples] == [("One?", "1"), ("Two?", "2")]
    for name in ("q.json", "q.jsonl"):
        loaded = file_dataset(str(tmp_path / name), fields)
        assert [(s.id, s.input, s.target) for s in loaded] == [(1, "One?", "1")]
        assert loaded.name == "q"


def test_file_dataset_refuses_another_extension_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "q.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ConfigError) as info:
        file_dataset(path)
    assert info.value.exit_code == EXIT_CONFIG
    assert ".csv, .json, .jsonl and .ndjson" in str(info.value)
    assert "'.parquet'" in str(info.value)


# -- auto_id -----------------------------------------------------------------------------


def test_auto_id_numbers_every_record_over_the_file_s_ids(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", QUESTIONS)
    assert [s.id for s in json_dataset(path, FIELDS)] == ["a", "b", "c"]
    numbered = json_dataset(path, FIELDS, auto_id=True)
    assert [s.id for s in numbered] == [1, 2, 3]


def test_auto_id_numbers_before_the_shuffle(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("input,id\nx,k\ny,k\nz,k\n", encoding="utf-8")
    with pytest.raises(ConfigError):  # the file's ids repeat ...
        csv_dataset(tmp_path / "q.csv")
    shuffled = csv_dataset(tmp_path / "q.csv", auto_id=True, shuffle=True, seed=3)
    assert sorted((s.id, s.input) for s in shuffled) == [(1, "x"), (2, "y"), (3, "z")]


# -- shuffle_choices ---------------------------------------------------------------------


def test_shuffle_choices_argument_moves_the_target_letters_with_the_choices(
    tmp_path: Path,
) -> None:
    path = _jsonl(tmp_path / "q.jsonl", QUESTIONS)
    right = _right_answers(json_dataset(path, FIELDS))
    orders = set()
    for seed in range(10):
        shuffled = json_dataset(path, FIELDS, shuffle_choices=seed)
        assert _right_answers(shuffled) == right
        assert all(isinstance(s.target, list) for s in shuffled if s.id == "c")
        orders.add(tuple(tuple(s.choices or ()) for s in shuffled))
    assert len(orders) > 5  # the seed decides the order


def test_the_same_seed_gives_the_same_choices_and_a_limit_does_not_change_them(
    tmp_path: Path,
) -> None:
    path = _jsonl(tmp_path / "q.jsonl", QUESTIONS)
    whole = json_dataset(path, FIELDS, shuffle_choices=42)
    again = json_dataset(path, FIELDS, shuffle_choices=42)
    assert list(whole) == list(again)
    limited = json_dataset(path, FIELDS, shuffle_choices=42, limit=1)
    assert list(limited) == list(whole)[:1]
    picked = select(json_dataset(path, FIELDS).shuffle_choices(42), sample_id="b")
    assert list(picked) == [whole[1]]


def test_the_method_returns_a_new_dataset_and_keeps_the_frozen_digest_honest() -> None:
    dataset = MemoryDataset(
        [Sample(input=q["question"], target=q["answer"], choices=q["options"]) for q in QUESTIONS]
    )
    shuffled = dataset.shuffle_choices(seed=7)
    assert [s.choices for s in dataset] == [q["options"] for q in QUESTIONS]  # unchanged
    assert _right_answers(shuffled) == _right_answers(dataset)
    assert [s.id for s in shuffled] == [None, None, None]  # numbered when frozen, as before
    assert freeze(shuffled, "m").digest == freeze(dataset.shuffle_choices(7), "m").digest
    assert freeze(shuffled, "m").digest != freeze(dataset, "m").digest


def test_shuffle_choices_without_a_seed_keeps_each_answer_right() -> None:
    dataset = MemoryDataset([Sample(input="?", target="C", choices=list("pqrstu"), id=1)])
    for _ in range(5):
        (sample,) = dataset.shuffle_choices()
        assert sample.choices is not None and sample.choices[ord(sample.target) - 65] == "r"


def test_samples_without_choices_are_left_as_they_are() -> None:
    dataset = MemoryDataset([Sample(input="free text", target="anything", id="t")])
    assert list(dataset.shuffle_choices(1)) == list(dataset)


@pytest.mark.parametrize("target", ["apple", "E", ["A", "x"], 1])
def test_a_target_that_is_not_a_choice_letter_is_one_config_error(target: object) -> None:
    dataset = MemoryDataset([Sample(input="?", target=target, choices=["p", "q"], id="s1")])
    with pytest.raises(ConfigError) as info:
        dataset.shuffle_choices(1)
    assert info.value.exit_code == EXIT_CONFIG
    assert "sample s1" in str(info.value)
    assert "(A to B)" in str(info.value)


def test_shuffle_choices_that_is_not_a_seed_is_refused(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", QUESTIONS)
    with pytest.raises(ConfigError, match="shuffle_choices='yes'"):
        json_dataset(path, FIELDS, shuffle_choices="yes")  # type: ignore[arg-type]


TASK = """
from assay import Task, task
from assay.dataset import FieldSpec, file_dataset
from assay.scorer import choice
from assay.solver import multiple_choice


@task
def fruit(target_field: str = "answer"):
    return Task(
        dataset=file_dataset(
            "fruit.jsonl",
            FieldSpec(input="question", target=target_field, choices="options"),
            shuffle_choices=7,
        ),
        solver=multiple_choice(),
        scorer=choice(),
    )
"""


def test_a_task_with_shuffled_choices_runs_and_a_bad_target_is_exit_2(tmp_path: Path) -> None:
    _jsonl(tmp_path / "fruit.jsonl", QUESTIONS[:2])
    (tmp_path / "fruit_task.py").write_text(TASK, encoding="utf-8")
    shown = json_dataset(tmp_path / "fruit.jsonl", FIELDS, shuffle_choices=7)
    right = sum(s.target == "A" for s in shown)  # the mock always answers A
    model = ["-m", "mock/x", "-M", "default_output=ANSWER: A"]
    proc = run_cli("run", "fruit_task.py@fruit", *model, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no gate: ungated
    assert f"choice: {right}/2" in proc.stdout
    bad = run_cli("run", "fruit_task.py@fruit", "-T", "target_field=question", *model, cwd=tmp_path)
    assert bad.returncode == 2
    assert "is not the letter of a choice" in error_line(bad)


# -- FieldSpec(metadata=<a class>) -------------------------------------------------------


def test_fieldspec_metadata_may_be_a_pydantic_model_or_a_dataclass(tmp_path: Path) -> None:
    import dataclasses

    import pydantic

    class Topic(pydantic.BaseModel):
        topic: str
        level: int

    @dataclasses.dataclass
    class Level:
        level: int

    rows = [{"q": "Why?", "topic": "physics", "level": 2, "source": "book"}]
    path = _jsonl(tmp_path / "q.jsonl", rows)
    (sample,) = json_dataset(path, FieldSpec(input="q", metadata=Topic))
    assert sample.metadata == {"topic": "physics", "level": 2}
    assert Topic.model_validate(sample.metadata).level == 2
    (sample,) = json_dataset(path, FieldSpec(input="q", metadata=Level))
    assert sample.metadata == {"level": 2}
    with pytest.raises(ConfigError, match="int is not a pydantic model"):
        json_dataset(path, FieldSpec(input="q", metadata=int))


@pytest.mark.doc("docs/cli.md", "| 2 | usage or configuration error: nothing was run |")
def test_a_sample_holding_a_value_that_is_not_json_ends_its_unit_in_error(
    tmp_path: Path,
) -> None:
    source = (
        "from assay import Task, task\n"
        "from assay.dataset import Sample\n"
        "from assay.scorer import match\n\n"
        "@task\n"
        "def odd():\n"
        "    samples = [Sample(input='a', target='a'), Sample(input='b', metadata={'z': 1j})]\n"
        "    return Task(dataset=samples, scorer=match())\n"
    )
    (tmp_path / "odd.py").write_text(source, encoding="utf-8")
    proc = run_cli("run", "odd.py@odd", "-m", "mock/x", cwd=tmp_path)
    assert proc.returncode == 2  # refused before its run, the error printed: no traceback
    assert "Traceback" not in proc.stderr
    assert "memory:2: the sample holds a value that is not JSON" in proc.stdout + proc.stderr


# -- csv_dataset: Inspect's dialect, encoding and fieldnames -------------------------------


def test_csv_dialect_fieldnames_and_encoding_as_inspect_passes_them(tmp_path: Path) -> None:
    tabbed = tmp_path / "q.tsv.csv"
    tabbed.write_text("question\tanswer\nOne, or two?\t1\n", encoding="utf-8")
    fields = FieldSpec(input="question", target="answer")
    (sample,) = csv_dataset(tabbed, fields, dialect="excel-tab", encoding="UTF8")
    assert (sample.input, sample.target) == ("One, or two?", "1")
    headless = tmp_path / "headless.csv"
    headless.write_text('"One?",1\n"Two?",2\n', encoding="utf-8")
    loaded = csv_dataset(headless, fields, fieldnames=["question", "answer"], dialect="unix")
    assert [(s.id, s.input, s.target) for s in loaded] == [(1, "One?", "1"), (2, "Two?", "2")]
    again = file_dataset(headless, fields, fieldnames=["question", "answer"], encoding="utf-8")
    assert list(again) == list(loaded)
    with pytest.raises(ConfigError, match="only UTF-8"):
        file_dataset(tmp_path / "any.jsonl", encoding="cp1252")


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"dialect": "tabs"}, "dialect 'tabs' is not a CSV dialect (known: excel, excel-tab"),
        ({"encoding": "latin-1"}, "encoding='latin-1': only UTF-8 files are read"),
    ],
)
def test_an_unknown_dialect_or_encoding_is_one_config_error(
    tmp_path: Path, options: dict[str, str], says: str
) -> None:
    path = tmp_path / "q.csv"
    path.write_text("input\nx\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        csv_dataset(path, **options)  # type: ignore[arg-type]
    assert info.value.exit_code == EXIT_CONFIG
    assert says in str(info.value)
