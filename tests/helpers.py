"""Builders shared by the tests: spec folders, datasets and CLI runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
SHIPPING = REPO / "examples" / "shipping"


def write_dataset(folder: Path, samples: list[dict[str, Any]], name: str = "data.jsonl") -> Path:
    """Write *samples* as a JSONL file in *folder*."""
    path = folder / name
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def write_spec(folder: Path, spec: dict[str, Any], name: str = "eval.yaml") -> Path:
    """Write *spec* as YAML in *folder* and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def simple_spec(
    folder: Path,
    *,
    samples: list[dict[str, Any]] | None = None,
    targets: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """A small valid spec: 3 echo samples and one callable target, scored by ``exact``."""
    folder.mkdir(parents=True, exist_ok=True)
    if samples is None:
        samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(3)]
    write_dataset(folder, samples)
    if targets is None:
        (folder / "answers.py").write_text("def echo(text):\n    return text\n")
        targets = [{"id": "echo", "callable": "answers:echo"}]
    spec: dict[str, Any] = {
        "evaluation": "simple",
        "dataset": "data.jsonl",
        "targets": targets,
        "scorers": [{"id": "exact", "type": "exact"}],
        "gate": {"minimum": 1.0},
    }
    spec.update(extra)
    return write_spec(folder, spec)


def run_cli(*args: str | os.PathLike[str], cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real ``assay`` command in a subprocess and capture its output."""
    full_env = {**os.environ, "LANG": "C.UTF-8", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
        check=False,
    )
