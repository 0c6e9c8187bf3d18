"""Hypothesis fuzzes the evidence reader (``verify_run``) with corrupted and wrongly
typed run folders: it must answer with problems or ``EvidenceError``, never crash."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from assay.errors import EvidenceError
from assay.evidence import verify_run
from tests.helpers import SHIPPING, run_spec_at
from tests.robustness._corpus_base import TEXT


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-run")
    shutil.copytree(SHIPPING, folder / "spec")
    run_spec_at(folder / "spec" / "eval.yaml", folder / "run")
    return folder / "run"


EVIDENCE_FILES = [
    "manifest.json",
    "spec.json",
    "plan.jsonl",
    "events.jsonl",
    "bundles.jsonl",
    "scores.jsonl",
    "report.json",
    "report.md",
    "report.html",
]
CORRUPTIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "truncate", "insert", "delete-range", "drop-line", "dup-line"]),
        st.integers(min_value=0, max_value=10**9),
        st.integers(min_value=1, max_value=64),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=3,
)


def corrupt(data: bytes, how: str, where: int, length: int, junk: bytes) -> bytes:
    if not data:
        return junk
    at = where % len(data)
    lines = data.splitlines(keepends=True)
    line = where % len(lines)
    if how == "flip":
        return data[:at] + bytes([data[at] ^ (junk[0] or 1)]) + data[at + 1 :]
    if how == "truncate":
        return data[:at]
    if how == "insert":
        return data[:at] + junk + data[at:]
    if how == "delete-range":
        return data[:at] + data[at + length :]
    if how == "drop-line":
        return b"".join(lines[:line] + lines[line + 1 :])
    return b"".join(lines[: line + 1] + lines[line:])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    file=st.sampled_from([*EVIDENCE_FILES, "pack"]),
    corruptions=CORRUPTIONS,
)
def test_fuzz_the_evidence_reader_with_corrupted_runs(
    good_run: Path, tmp_path_factory: pytest.TempPathFactory, file: str, corruptions: Any
) -> None:
    run = tmp_path_factory.mktemp("corrupt") / "run"
    shutil.copytree(good_run, run)
    path = next((run / "artifacts").glob("pack-*.bin")) if file == "pack" else run / file
    original = data = path.read_bytes()
    for how, where, length, junk in corruptions:
        data = corrupt(data, how, where, length, junk)
    assume(data != original)
    path.write_bytes(data)
    try:
        result = verify_run(run)
    except EvidenceError:
        return
    # every evidence file is bound by a digest: a changed byte can never verify
    assert result.problems, (file, corruptions)
    shutil.rmtree(run)


def _edit_json_line(run: Path, name: str, edit: Callable[[Any], Any], line: int = 0) -> None:
    path = run / name
    lines = path.read_bytes().splitlines(keepends=True)
    record = edit(json.loads(lines[line]))
    lines[line] = json.dumps(record, separators=(",", ":"), sort_keys=True).encode() + (
        b"\n" if lines[line].endswith(b"\n") else b""
    )
    path.write_bytes(b"".join(lines))


def _set(key: str, value: Any, *, inner: str | None = None) -> Callable[[Any], Any]:
    def edit(record: Any) -> Any:
        (record[inner] if inner else record)[key] = value
        return record

    return edit


def _replace_with_dir(name: str) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        path = run / name
        path.unlink()
        path.mkdir()

    return edit


def _pack(run: Path) -> Path:
    return next((run / "artifacts").glob("pack-*.bin"))


STRUCTURAL: list[tuple[str, Callable[[Path], None], str]] = [
    # (id, edit, the file or folder a finding must name)
    ("manifest-a-list", lambda r: (r / "manifest.json").write_text("[1]"), "manifest.json"),
    ("plan-line-a-list", lambda r: (r / "plan.jsonl").write_text("[1]\n"), "plan.jsonl"),
    ("event-line-a-list", lambda r: (r / "events.jsonl").write_text("[1, 2]\n"), "events.jsonl"),
    (
        "event-trial-a-list",
        lambda r: _edit_json_line(r, "events.jsonl", _set("trial", [1])),
        "events.jsonl",
    ),
    ("event-n-text", lambda r: _edit_json_line(r, "events.jsonl", _set("n", "1")), "events.jsonl"),
    ("bundle-line-a-list", lambda r: (r / "bundles.jsonl").write_text("[1]\n"), "bundles.jsonl"),
    (
        "bundle-trial-text",
        lambda r: _edit_json_line(r, "bundles.jsonl", _set("trial", "x")),
        "bundles.jsonl",
    ),
    ("score-line-a-list", lambda r: (r / "scores.jsonl").write_text("[1]\n"), "scores.jsonl"),
    ("spec-wrong-type", lambda r: (r / "spec.json").write_text('{"evaluation": 5}'), "spec.json"),
    ("manifest-dir", _replace_with_dir("manifest.json"), "manifest.json"),
    (
        "manifest-files-list",
        lambda r: _edit_json_line(r, "manifest.json", _set("files", [])),
        "manifest.json",
    ),
    (
        "manifest-files-null",
        lambda r: _edit_json_line(r, "manifest.json", _set("files", None)),
        "manifest.json",
    ),
    (
        "bundle-events-text",
        lambda r: _edit_json_line(r, "bundles.jsonl", _set("events", "x")),
        "bundles.jsonl",
    ),
    (
        "bundle-events-ints",
        lambda r: _edit_json_line(r, "bundles.jsonl", _set("events", [1])),
        "bundles.jsonl",
    ),
    (
        "bundle-artifacts-list",
        lambda r: _edit_json_line(r, "bundles.jsonl", _set("artifacts", [])),
        "bundles.jsonl",
    ),
    (
        "score-trial-a-list",
        lambda r: _edit_json_line(r, "scores.jsonl", _set("trial_id", [])),
        "scores.jsonl",
    ),
    ("spec-json-a-dir", _replace_with_dir("spec.json"), "spec.json"),
    ("events-jsonl-a-dir", _replace_with_dir("events.jsonl"), "events.jsonl"),
    ("pack-a-dir", lambda r: (_pack(r).unlink(), _pack_dir(r)), "artifacts"),
    (
        "artifacts-a-file",
        lambda r: (shutil.rmtree(r / "artifacts"), (r / "artifacts").write_text("x")),
        "artifacts",
    ),
    (
        "artifact-folder-holds-a-dir",
        lambda r: (r / "artifacts" / "ab" / "sub").mkdir(parents=True),
        "artifacts",
    ),
]


def _pack_dir(run: Path) -> None:
    (run / "artifacts" / "pack-0001.bin").mkdir()


VERIFY_CRASH = (
    "BUG: verify_run assumes the JSON types and file kinds it expects (evidence/_verify.py: "
    "manifest 'files', bundle 'events'/'artifacts', score 'trial_id', a folder where a file "
    "belongs); it crashes (exit 70) instead of naming the problem (exit 4)"
)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        pytest.param(
            edit,
            named,
            id=name,
        )
        for name, edit, named in STRUCTURAL
    ],
)
def test_verify_names_structurally_wrong_evidence_and_never_crashes(
    good_run: Path, tmp_path: Path, edit: Callable[[Path], None], named: str
) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    edit(run)
    try:
        result = verify_run(run)
    except EvidenceError as exc:  # not a run at all: the one line says which file
        assert named in exc.one_line(), exc.one_line()
        return
    assert any(p.startswith(named) for p in result.problems), (named, result.problems)


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)


def _paths_into(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths_into(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += _paths_into(inner, (*prefix, index))
    return found


# No shrinking: a failure is reported as found, not after minutes of shrinking run folders.
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking
)
@given(
    name=st.sampled_from(
        ["manifest.json", "plan.jsonl", "events.jsonl", "bundles.jsonl", "scores.jsonl"]
    ),
    choice=st.integers(min_value=0, max_value=10**6),
    value=JSON_VALUES,
)
def test_fuzz_the_evidence_reader_with_wrongly_typed_fields(
    good_run: Path, tmp_path_factory: pytest.TempPathFactory, name: str, choice: int, value: Any
) -> None:
    run = tmp_path_factory.mktemp("typed") / "run"
    shutil.copytree(good_run, run)
    lines = (run / name).read_bytes().splitlines()
    line = choice % len(lines)
    record = json.loads(lines[line])
    paths = _paths_into(record)
    path = paths[choice % len(paths)]
    node = record
    for step in path[:-1]:
        node = node[step]
    assume(node[path[-1]] != value)
    node[path[-1]] = value

    def edit(_: Any) -> Any:
        return record

    _edit_json_line(run, name, edit, line)
    try:
        result = verify_run(run)
    except EvidenceError:
        return
    assert result.problems, (name, path, value)
