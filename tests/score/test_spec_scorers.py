"""The four scorers a YAML spec declares, judged through real runs (docs/spec.md, Scorers).

One run per scorer: a callable target answers each sample with the output the case
names (or crashes, or cannot reach its dependency), and ``scores.jsonl`` must hold the
status the table in docs/spec.md promises for each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FAST_RETRY, read_jsonl, run_spec_at, unique_callable_spec

TARGET = """
def answer(sample):
    if "crash" in sample:
        raise ValueError("the product crashed")
    if "down" in sample:
        raise ConnectionError("the dependency is down")
    return sample["answer"]
"""

Case = tuple[Any, Any, str]  # (the target's output, the sample's expected value, status)

# Every scorer: a product failure is `failed`; a blocked trial is `unscorable`.
FAILURES = [
    {"id": "crashed", "input": {"crash": True}, "expected": "x", "status": "failed"},
    {"id": "blocked", "input": {"down": True}, "expected": "x", "status": "unscorable"},
]

SCORERS: dict[str, tuple[dict[str, Any], list[Case]]] = {
    "field_match": (
        {"type": "field_match", "field": "fee"},
        [
            ({"fee": 0, "other": 1}, {"fee": 0, "other": 2}, "passed"),
            ({"fee": 10}, {"fee": 0}, "failed"),
            ({"fee": 0}, 0, "passed"),  # expected is not an object: compared whole
            ({"fee": 1}, 0, "failed"),
            ({"fee": True}, {"fee": 1}, "failed"),  # JSON equality: true is not 1
            ("fee: 0", {"fee": 0}, "failed"),  # the output has no such field
            ({"fee": 0}, {"amount": 0}, "unscorable"),  # the sample lacks what it needs
        ],
    ),
    "exact": (
        {"type": "exact"},
        [
            (" Paris\n", "Paris", "passed"),  # text is compared stripped
            ("paris", "Paris", "failed"),
            ({"a": [1, 2]}, {"a": [1, 2]}, "passed"),
            ([1, 2], [2, 1], "failed"),
            ("Paris", None, "unscorable"),
        ],
    ),
    "exact-ignore-case": (
        {"type": "exact", "ignore_case": True},
        [("PARIS ", "paris", "passed"), ("Lyon", "paris", "failed")],
    ),
    "includes": (
        {"type": "includes"},
        [
            ("the answer is Paris.", "Paris", "passed"),
            ("the answer is paris.", "Paris", "failed"),
            ("Lyon", "Paris", "failed"),
            ("Paris", None, "unscorable"),
        ],
    ),
    "regex-group": (
        {"type": "regex", "pattern": r"fee (\d+)"},
        [
            ("the fee 10 applies", "10", "passed"),
            ("the fee 12 applies", "10", "failed"),
            ("free shipping", "10", "failed"),  # no match
            ("the fee 10 applies", None, "unscorable"),
        ],
    ),
    "regex-no-group": (
        {"type": "regex", "pattern": r"^ok\b"},
        [("ok, done", None, "passed"), ("not ok", "ok", "failed")],
    ),
}


def _samples(cases: list[Case]) -> list[dict[str, Any]]:
    samples = [
        {"id": f"case{i}", "input": {"answer": output}, "expected": expected}
        for i, (output, expected, _) in enumerate(cases)
    ]
    return samples + [{k: v for k, v in s.items() if k != "status"} for s in FAILURES]


def _expected_statuses(cases: list[Case]) -> dict[str, str]:
    statuses = {f"case{i}": status for i, (_, _, status) in enumerate(cases)}
    return statuses | {s["id"]: s["status"] for s in FAILURES}


@pytest.mark.parametrize("name", list(SCORERS))
@pytest.mark.doc(
    "docs/spec.md",
    "| `field_match` | `output[field] == expected[field]` (or `== expected` if expected is not "
    "an object) |",
    "| `exact` | output equals expected (text compared stripped; `ignore_case: true` to fold "
    "case) |",
    "| `includes` | the expected text occurs in the output text |",
    "| `regex` | `pattern` matches the output; with a group, the group equals expected |",
    "A product failure is `failed`; a trial with no product result (blocked) is `unscorable`, "
    "as is a sample that lacks what the scorer needs.",
)
def test_each_scorer_judges_as_documented(tmp_path: Path, name: str) -> None:
    scorer, cases = SCORERS[name]
    spec = unique_callable_spec(
        tmp_path / "spec",
        TARGET,
        samples=_samples(cases),
        scorers=[{"id": "judge", **scorer}],
        retry=FAST_RETRY,
    )
    run_spec_at(spec, tmp_path / "run")
    statuses = {s["sample_id"]: s["status"] for s in read_jsonl(tmp_path / "run" / "scores.jsonl")}
    assert statuses == _expected_statuses(cases)
