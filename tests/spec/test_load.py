"""Loading a YAML spec: a valid one freezes; every malformed one is one clear ConfigError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.errors import EXIT_CONFIG, ConfigError
from assay.spec import EvalSpec, LoadedSpec, load_spec
from tests.helpers import error_line, run_cli, simple_spec, write_spec


@pytest.mark.doc(
    "docs/spec.md",
    "A spec is a YAML file.",
)
def test_valid_spec_loads(tmp_path: Path) -> None:
    path = simple_spec(tmp_path, repetitions=2, description="three echoes")
    loaded = load_spec(path)
    assert isinstance(loaded, LoadedSpec)
    spec = loaded.spec
    assert isinstance(spec, EvalSpec)
    assert spec.evaluation == "simple"
    assert spec.description == "three echoes"
    assert spec.repetitions == 2
    assert spec.dataset.path == "data.jsonl"
    assert spec.dataset.samples == 3
    assert spec.dataset.digest.startswith("sha256:") and len(spec.dataset.digest) == 71
    assert [t.id for t in spec.targets] == ["echo"]
    assert spec.targets[0].kind == "callable"
    assert spec.targets[0].callable == "answers:echo"
    assert [s.id for s in spec.scorers] == ["exact"]
    assert spec.gate.minimum == 1.0
    assert loaded.root == tmp_path.resolve()
    assert len(loaded.dataset) == 3
    assert loaded.dataset.ids == ["s0", "s1", "s2"]


def test_loaded_spec_is_frozen(tmp_path: Path) -> None:
    spec = load_spec(simple_spec(tmp_path)).spec
    with pytest.raises(AttributeError):
        spec.repetitions = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        spec.gate.minimum = 0.0  # type: ignore[misc]
    assert isinstance(spec.targets, tuple)


def test_script_target_is_pinned(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text("print('{}')\n")
    path = simple_spec(tmp_path, targets=[{"id": "prog", "script": "answer.py", "args": ["-v"]}])
    target = load_spec(path).spec.target("prog")
    assert target.kind == "subprocess"
    assert target.script == "answer.py"
    # The interpreter stays symbolic so the digest is the same on every machine.
    assert target.argv == ("{python}", "answer.py", "-v")
    assert target.digest is not None and target.digest.startswith("sha256:")


def test_missing_spec_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_spec(tmp_path / "nope.yaml")
    assert info.value.key == "spec.not_found"
    line = error_line(run_cli("run", tmp_path / "nope.yaml", "--output", tmp_path / "run"))
    assert "nope.yaml" in line
    assert not (tmp_path / "run").exists()


def test_spec_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(ConfigError) as info:
        load_spec(tmp_path / "dir.yaml")
    assert info.value.key == "spec.unreadable"


# --- bad shapes ---------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(**changes: Any) -> Mutation:
    return lambda spec: spec.update(changes)


def _drop(key: str) -> Mutation:
    return lambda spec: spec.pop(key)


def _target(**changes: Any) -> Mutation:
    return lambda spec: spec["targets"][0].update(changes)


def _dup_targets(spec: dict[str, Any]) -> None:
    spec["targets"] = [spec["targets"][0], dict(spec["targets"][0])]


# (case id, how to break the spec, catalog key, text the one error line must contain)
SHAPES: list[tuple[str, Mutation, str, list[str]]] = [
    ("unknown-top-field", _set(temprature=0.2), "spec.shape", ["temprature"]),
    ("unknown-target-field", _target(modle="x"), "spec.shape", ["targets[0]", "modle"]),
    ("repetitions-wrong-type", _set(repetitions="two"), "spec.shape", ["repetitions"]),
    ("repetitions-bool", _set(repetitions=True), "spec.shape", ["repetitions"]),
    ("repetitions-zero", _set(repetitions=0), "spec.shape", ["repetitions"]),
    ("missing-evaluation", _drop("evaluation"), "spec.shape", ["evaluation"]),
    ("missing-dataset", _drop("dataset"), "spec.shape", ["dataset"]),
    ("missing-scorers", _drop("scorers"), "spec.shape", ["scorers"]),
    ("dataset-not-text", _set(dataset=5), "spec.shape", ["dataset"]),
    ("evaluation-bad-id", _set(evaluation="has space"), "spec.shape", ["evaluation"]),
    ("no-targets", _set(targets=[]), "spec.shape", ["targets"]),
    ("targets-not-list", _set(targets={"id": "x"}), "spec.shape", ["targets"]),
    ("no-scorers", _set(scorers=[]), "spec.shape", ["scorers"]),
    ("duplicate-target-ids", _dup_targets, "spec.shape", ["targets", "'echo'"]),
    ("target-bad-id", _target(id="a/b"), "spec.shape", ["targets", "a/b"]),
    ("target-missing-id", lambda s: s["targets"][0].pop("id"), "spec.shape", ["targets[0]", "id"]),
    ("script-and-callable", _target(script="answers.py"), "spec.shape", ["targets[0]"]),
    ("argv-and-callable", _target(argv=["prog"]), "spec.shape", ["targets[0]"]),
    ("no-kind", lambda s: s["targets"][0].pop("callable"), "spec.shape", ["targets[0]"]),
    ("timeout-zero", _target(timeout=0), "spec.shape", ["targets[0]", "timeout"]),
    (
        "duplicate-scorer-ids",
        _set(scorers=[{"type": "exact"}, {"type": "exact"}]),
        "spec.shape",
        ["scorers", "'exact'"],
    ),
    ("scorer-unknown-type", _set(scorers=[{"type": "fuzzy"}]), "spec.shape", ["scorers[0].type"]),
    (
        "regex-invalid-pattern",
        _set(scorers=[{"type": "regex", "pattern": "(unclosed"}]),
        "spec.shape",
        ["scorers[0].pattern"],
    ),
    (
        "regex-no-pattern",
        _set(scorers=[{"type": "regex"}]),
        "spec.shape",
        ["scorers[0]", "pattern"],
    ),
    (
        "field-match-no-field",
        _set(scorers=[{"type": "field_match"}]),
        "spec.shape",
        ["scorers[0]", "field"],
    ),
    ("gate-minimum-above-1", _set(gate={"minimum": 1.5}), "spec.shape", ["gate.minimum"]),
    ("gate-minimum-negative", _set(gate={"minimum": -0.1}), "spec.shape", ["gate.minimum"]),
    ("gate-minimum-text", _set(gate={"minimum": "high"}), "spec.shape", ["gate.minimum"]),
    ("gate-target-above-1", _set(gate={"targets": {"echo": 2}}), "spec.shape", ["gate", "echo"]),
    (
        "gate-unknown-target",
        _set(gate={"targets": {"nope": 0.5}}),
        "spec.shape",
        ["gate.targets", "'nope'"],
    ),
    ("gate-unknown-scorer", _set(gate={"scorer": "nope"}), "spec.shape", ["gate.scorer", "'nope'"]),
    ("gate-unknown-field", _set(gate={"minimun": 1.0}), "spec.shape", ["gate", "minimun"]),
    ("retry-zero-attempts", _set(retry={"max_attempts": 0}), "spec.shape", ["retry"]),
    ("retry-negative-backoff", _set(retry={"initial_backoff": -1}), "spec.shape", ["retry"]),
    ("hidden-fields-not-list", _set(hidden_fields="customer"), "spec.shape", ["hidden_fields"]),
]


def _check_one_line(path: Path, tmp_path: Path, needles: list[str]) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", path, "--output", out)
    assert proc.returncode == EXIT_CONFIG, proc.stderr
    line = error_line(proc)
    assert str(path) in line
    for needle in needles:
        assert needle in line, line
    assert proc.stdout == ""
    assert not out.exists(), "a config error must not create the run folder"


@pytest.mark.parametrize(
    ("mutate", "key", "needles"),
    [pytest.param(m, k, n, id=i) for i, m, k, n in SHAPES],
)
@pytest.mark.doc(
    "docs/spec.md",
    "Unknown fields are errors, so a typo never becomes a silently ignored setting.",
)
def test_bad_shape(tmp_path: Path, mutate: Mutation, key: str, needles: list[str]) -> None:
    path = simple_spec(tmp_path)
    spec = yaml.safe_load(path.read_text())
    mutate(spec)
    write_spec(tmp_path, spec)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == key
    assert info.value.exit_code == EXIT_CONFIG
    for needle in [str(path), *needles]:
        assert needle in info.value.one_line()
    _check_one_line(path, tmp_path, needles)


# (case id, file bytes, catalog key, text the error line must contain)
RAW: list[tuple[str, bytes, str, list[str]]] = [
    (
        "invalid-yaml",
        b"evaluation: [unclosed\ndataset: data.jsonl\n",
        "spec.yaml",
        ["YAML", "line"],
    ),
    ("yaml-tab-indent", b"evaluation: x\n\tdataset: d\n", "spec.yaml", ["YAML"]),
    ("yaml-list", b"- evaluation: x\n- dataset: data.jsonl\n", "spec.shape", ["mapping"]),
    ("yaml-scalar", b"just some text\n", "spec.shape", ["mapping"]),
    ("empty-file", b"", "spec.shape", ["mapping"]),
    (
        "python-tag-refused",
        b"evaluation: !!python/object/apply:os.system ['echo pwned']\n",
        "spec.yaml",
        ["YAML"],
    ),
    ("bom", b"\xef\xbb\xbfevaluation: simple\n", "spec.encoding", ["byte-order mark"]),
    ("non-utf8", b"evaluation: caf\xe9\n", "spec.encoding", ["UTF-8", "byte 15"]),
]


@pytest.mark.parametrize(
    ("data", "key", "needles"),
    [pytest.param(d, k, n, id=i) for i, d, k, n in RAW],
)
@pytest.mark.doc(
    "docs/spec.md",
    "A spec is a YAML file.",
)
def test_bad_file(tmp_path: Path, data: bytes, key: str, needles: list[str]) -> None:
    path = simple_spec(tmp_path)
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == key
    for needle in [str(path), *needles]:
        assert needle in info.value.one_line()
    _check_one_line(path, tmp_path, needles)


def test_bom_after_valid_yaml_is_still_named(tmp_path: Path) -> None:
    """A BOM in front of an otherwise valid spec is refused, not silently stripped."""
    path = simple_spec(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.encoding"


def test_int_and_float_numbers_load_alike(tmp_path: Path) -> None:
    """``minimum: 1`` and ``timeout: 10`` are accepted where floats are declared."""
    path = simple_spec(tmp_path / "a", gate={"minimum": 1})
    spec = yaml.safe_load(path.read_text())
    spec["targets"][0]["timeout"] = 10
    write_spec(tmp_path / "a", spec)
    loaded = load_spec(path).spec
    assert loaded.gate.minimum == 1.0
    assert loaded.targets[0].timeout == 10.0


@pytest.mark.parametrize(
    "extra",
    [
        "gate:\n  minimum: 0.0\n",
        "evaluation: other\n",
    ],
    ids=["gate", "evaluation"],
)
@pytest.mark.doc(
    "docs/spec.md",
    "A key given twice is refused (plain YAML keeps the last one silently).",
)
def test_duplicate_yaml_key_is_refused(tmp_path: Path, extra: str) -> None:
    """Plain YAML keeps the last of two equal keys; a spec refuses them like a typo."""
    path = simple_spec(tmp_path)
    path.write_text(path.read_text() + extra)
    key = extra.split(":")[0]
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.yaml"
    assert f"'{key}'" in info.value.one_line() and "twice" in info.value.one_line()
    _check_one_line(path, tmp_path, [f"'{key}'", "twice"])


@pytest.mark.doc(
    "docs/spec.md",
    "A key given twice is refused (plain YAML keeps the last one silently).",
)
def test_duplicate_nested_yaml_key_is_refused(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    text = path.read_text().replace("callable: answers:echo", "callable: answers:echo\n  id: x")
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.yaml"
    assert "'id'" in info.value.one_line()


@pytest.mark.parametrize("field", ["id", "input", "expected", "metadata"])
@pytest.mark.doc(
    "docs/spec.md",
    "The names `id`, `input`, `expected` and `metadata` themselves cannot be hidden.",
)
def test_hiding_a_sample_field_itself_is_a_config_error(tmp_path: Path, field: str) -> None:
    """Hiding ``expected`` used to crash every trial (exit 70); it is refused up front."""
    path = simple_spec(tmp_path, hidden_fields=["customer", field])
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.shape"
    _check_one_line(path, tmp_path, ["hidden_fields", f"'{field}'"])


@pytest.mark.parametrize("value", ["", "   "], ids=["empty", "blank"])
def test_empty_dataset_path_is_missing_not_absolute(tmp_path: Path, value: str) -> None:
    path = simple_spec(tmp_path, dataset=value)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.key == "spec.path_missing"
    assert "dataset" in info.value.one_line()
