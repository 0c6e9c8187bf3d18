"""Invariant 1: the frozen spec has one canonical JSON and one digest, and no secrets."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.spec import SPEC_SCHEMA, load_spec
from tests.helpers import REPO, SHIPPING, run_cli, simple_spec, write_dataset, write_spec

SECRET = "sk-test-0123456789abcdefSECRETSECRET"


def _digest(path: Path) -> str:
    return load_spec(path).spec.digest


def _reversed(value: Any) -> Any:
    """The same YAML value with every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


def test_canonical_json_is_sorted_compact_utf8(tmp_path: Path) -> None:
    spec = load_spec(simple_spec(tmp_path, description="frais de port — 运费")).spec
    data = spec.canonical()
    decoded = json.loads(data)
    again = json.dumps(decoded, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert data == again.encode("utf-8")
    assert decoded["schema"] == SPEC_SCHEMA
    assert decoded["evaluation"] == "simple"
    assert spec.digest == "sha256:" + hashlib.sha256(data).hexdigest()


def test_digest_is_stable_across_loads(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    first, second = load_spec(path).spec, load_spec(path).spec
    assert first.canonical() == second.canonical()
    assert first.digest == second.digest


def test_digest_is_the_same_in_another_process(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import sys; from pathlib import Path; from assay.spec import load_spec; "
        "s = load_spec(Path(sys.argv[1])).spec; print(s.digest); print(s.canonical().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        check=True,
        timeout=60,
    )
    digest, canonical_hex = proc.stdout.split()
    spec = load_spec(path).spec
    assert digest == spec.digest
    assert bytes.fromhex(canonical_hex) == spec.canonical()


def test_shipping_digest_does_not_depend_on_the_folder(tmp_path: Path) -> None:
    """Copying the spec folder elsewhere (another machine) keeps the digest."""
    copy = tmp_path / "deep" / "copy"
    shutil.copytree(SHIPPING, copy, ignore=shutil.ignore_patterns("__pycache__", "runs"))
    assert _digest(copy / "eval.yaml") == _digest(SHIPPING / "eval.yaml")


def test_relative_and_absolute_spec_paths_give_one_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = simple_spec(tmp_path / "suite")
    absolute = _digest(path)
    monkeypatch.chdir(tmp_path)
    assert _digest(Path("suite/eval.yaml")) == absolute
    assert _digest(Path("suite/../suite/eval.yaml")) == absolute


def test_yaml_key_order_does_not_change_the_digest(tmp_path: Path) -> None:
    path = simple_spec(
        tmp_path,
        repetitions=2,
        gate={"minimum": 0.5, "targets": {"echo": 0.9}},
        retry={"max_attempts": 2, "initial_backoff": 0.1, "max_backoff": 1.0},
        hidden_fields=["customer"],
    )
    before = _digest(path)
    spec = yaml.safe_load(path.read_text())
    shuffled = _reversed(spec)
    assert list(shuffled) != list(spec)
    write_spec(tmp_path, shuffled)
    assert path.read_text() != yaml.safe_dump(spec, sort_keys=False)
    assert _digest(path) == before


def test_yaml_formatting_does_not_change_the_digest(tmp_path: Path) -> None:
    path = simple_spec(tmp_path, gate={"minimum": 1.0})
    before = _digest(path)
    spec = yaml.safe_load(path.read_text())
    spec["gate"]["minimum"] = 1  # an int where a float is declared
    flow = "# a comment\n" + yaml.safe_dump(spec, default_flow_style=True, width=40)
    path.write_text(flow)
    assert _digest(path) == before


@pytest.mark.parametrize(
    "change",
    [
        {"repetitions": 2},
        {"gate": {"minimum": 0.5}},
        {"scorers": [{"id": "exact", "type": "exact", "ignore_case": True}]},
        {"retry": {"max_attempts": 5}},
        {"hidden_fields": ["customer"]},
        {"evaluation": "simple-2"},
        {"targets": [{"id": "echo", "callable": "answers:echo", "timeout": 5}]},
        {"targets": [{"id": "echo2", "callable": "answers:echo"}]},
    ],
    ids=lambda c: next(iter(c)),
)
@pytest.mark.doc(
    "docs/spec.md",
    "Everything in it decides results, so it is frozen before the first trial",
)
def test_what_decides_results_changes_the_digest(tmp_path: Path, change: dict[str, Any]) -> None:
    base = _digest(simple_spec(tmp_path / "a"))
    assert _digest(simple_spec(tmp_path / "b", **change)) != base


@pytest.mark.doc(
    "docs/spec.md",
    "Files it names (the dataset, target scripts) are pinned by their own digests inside it.",
)
def test_dataset_bytes_change_the_digest(tmp_path: Path) -> None:
    path = simple_spec(tmp_path)
    before = load_spec(path).spec
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(3)]
    samples[1]["expected"] = "other"
    write_dataset(tmp_path, samples)
    changed = load_spec(path).spec
    assert changed.dataset.digest != before.dataset.digest
    assert changed.digest != before.digest

    # Same samples, different bytes (a trailing blank line): still a different dataset.
    data = tmp_path / "data.jsonl"
    data.write_bytes(data.read_bytes() + b"\n")
    padded = load_spec(path).spec
    assert padded.dataset.samples == changed.dataset.samples
    assert padded.digest != changed.digest

    digest = "sha256:" + hashlib.sha256(data.read_bytes()).hexdigest()
    assert padded.dataset.digest == digest


@pytest.mark.doc(
    "docs/spec.md",
    "Files it names (the dataset, target scripts) are pinned by their own digests inside it.",
)
def test_script_digest_follows_the_script(tmp_path: Path) -> None:
    script = tmp_path / "answer.py"
    script.write_text("import sys, json\nprint(json.dumps('a'))\n")
    path = simple_spec(tmp_path, targets=[{"id": "prog", "script": "answer.py"}])
    first = load_spec(path).spec
    pinned = "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()
    assert first.target("prog").digest == pinned
    assert pinned.encode() in first.canonical()

    script.write_text("import sys, json\nprint(json.dumps('b'))\n")
    second = load_spec(path).spec
    assert second.target("prog").digest != first.target("prog").digest
    assert second.digest != first.digest

    script.write_text("import sys, json\nprint(json.dumps('a'))\n")
    assert load_spec(path).spec.digest == first.digest


@pytest.mark.doc(
    "docs/spec.md",
    "It has no field for a secret: targets read credentials from the environment when they run.",
)
def test_secrets_in_the_environment_never_enter_the_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = simple_spec(tmp_path)
    clean = load_spec(path).spec
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ASSAY_TOKEN"):
        monkeypatch.setenv(name, SECRET)
    spec = load_spec(path).spec
    assert SECRET.encode() not in spec.canonical()
    assert b"OPENAI_API_KEY" not in spec.canonical()
    assert spec.digest == clean.digest


def test_secrets_never_reach_the_run_directory(tmp_path: Path) -> None:
    path = simple_spec(tmp_path / "suite")
    out = tmp_path / "run"
    proc = run_cli("run", path, "--output", out, env={"OPENAI_API_KEY": SECRET})
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "spec.json" for p in files)
    for file in files:
        assert SECRET.encode() not in file.read_bytes(), file


@pytest.mark.doc(
    "docs/spec.md",
    "Everything in it decides results, so it is frozen before the first trial: assay writes "
    "its canonical JSON to the run as `spec.json` and its SHA-256 is the *spec digest*.",
)
def test_run_stores_the_exact_canonical_spec(tmp_path: Path) -> None:
    path = simple_spec(tmp_path / "suite")
    out = tmp_path / "run"
    assert run_cli("run", path, "--output", out, cwd=REPO).returncode == 0
    spec = load_spec(path).spec
    frozen = (out / "spec.json").read_bytes()
    assert frozen == spec.canonical()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["spec_digest"] == spec.digest == "sha256:" + hashlib.sha256(frozen).hexdigest()


@pytest.mark.parametrize(
    ("where", "field"),
    [("top", "api_key"), ("target", "api_key"), ("target", "headers")],
)
@pytest.mark.doc(
    "docs/spec.md",
    "It has no field for a secret: targets read credentials from the environment when they run.",
)
def test_a_spec_has_no_field_for_a_secret(tmp_path: Path, where: str, field: str) -> None:
    """A key pasted into the spec is refused like any unknown field: it would be frozen
    into spec.json, hashed into the digest and copied into every run."""
    path = simple_spec(tmp_path)
    spec = yaml.safe_load(path.read_text())
    (spec if where == "top" else spec["targets"][0])[field] = SECRET
    write_spec(tmp_path, spec)
    proc = run_cli("run", path, "--output", tmp_path / "run")
    assert proc.returncode == 2, proc.stderr
    assert field in proc.stderr and not (tmp_path / "run").exists()
