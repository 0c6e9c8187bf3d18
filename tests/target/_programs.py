"""Builders shared by the program-target attack tests (test_program_isolation.py, run
unsandboxed, and test_program_sandbox.py, under ``sandbox: bwrap``): a spec whose one
target is a script written beside it, the samples a cheat cannot guess, and what the
run answered and passed."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from tests.helpers import artifact_bytes, bundles_by_sample, read_jsonl, simple_spec, write_module

N = 20
"""Samples in an attack's run: a cheat that works passes all of them."""

ONE_SAMPLE = [{"id": "s0", "input": 0, "expected": 0}]


def program_spec(
    folder: Path,
    source: str,
    target: dict[str, Any] | None = None,
    *,
    name: str = "program",
    samples: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> Path:
    """A spec in *folder* whose one target (id ``t`` unless *target* names one) runs
    *source*, written beside it as ``NAME.py``; one sample unless *samples* are given."""
    write_module(folder, name, source)
    targets = [{"id": "t", "script": f"{name}.py", **(target or {})}]
    return simple_spec(folder, samples=samples or ONE_SAMPLE, targets=targets, **spec)


def secret_samples(n: int = N) -> list[dict[str, Any]]:
    """Samples whose expected answers are random: only a cheat can know them."""
    return [{"id": f"s{i}", "input": f"s{i}", "expected": secrets.token_hex(8)} for i in range(n)]


def output_bytes(run: Path, sample_id: str = "s0") -> bytes:
    """The exact bytes the target answered for *sample_id*."""
    return artifact_bytes(run, bundles_by_sample(run)[sample_id]["artifacts"]["output"])


def output_json(run: Path, sample_id: str = "s0") -> Any:
    """What the target answered for *sample_id*, as JSON."""
    return json.loads(output_bytes(run, sample_id))


def passed_samples(run: Path) -> list[str]:
    """The sample ids the run scored ``passed``."""
    return sorted(
        r["sample_id"] for r in read_jsonl(run / "scores.jsonl") if r["status"] == "passed"
    )
