"""Scorers: judge an observation (the output and the expected value), nothing else.

A scorer never sees whether the target thought it succeeded; it sees the decoded output
bytes the evidence holds, the expected value from the dataset, and whether the product
failed. It answers ``passed``, ``failed`` or ``unscorable`` (it cannot judge: e.g. the
sample has no expected value for the field). An exception inside a scorer is caught by
the caller and recorded as ``error``, never hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from assay.spec import ScorerSpec

ScoreStatus = Literal["passed", "failed", "unscorable", "error"]


class Observation(msgspec.Struct, frozen=True):
    """What a scorer may read: the outcome, the decoded output and the expected value.

    ``raw`` is the output artifact's JSON bytes as stored, for a scorer that decodes them
    its own way (a Python scorer's ``TaskState``); ``output`` is then left undecoded
    (``None``) when no scorer of the run reads it (see ``READS_RAW``).
    """

    expected: Any
    outcome: str | None
    output: Any = None
    failure: str | None = None
    raw: bytes | None = None


READS_RAW = "reads_raw"
"""The attribute (true) of a scorer that reads only ``Observation.raw`` of a JSON output:
when every scorer of a run does, the judge does not decode the output for them."""


class Verdict(msgspec.Struct, frozen=True):
    """A scorer's judgement: status, value in [0, 1], why, the answer it read, and details."""

    status: ScoreStatus
    value: float | None
    reason: str
    answer: str | None = None
    metadata: dict[str, Any] | None = None
    values: dict[str, float] | None = None
    """A dict- or list-valued Python score's values by key (a list's by position), each
    on the metrics' scale; ``value`` is then their mean."""


Scorer = Callable[[Observation], Verdict]

PASSED = Verdict("passed", 1.0, "")


def _failed(reason: str) -> Verdict:
    return Verdict("failed", 0.0, reason)


def _unscorable(reason: str) -> Verdict:
    return Verdict("unscorable", None, reason)


def product_gate(observation: Observation, score_on_error: bool = False) -> Verdict | None:
    """Outcomes no scorer needs to look into: a product failure fails (the product did not
    answer); no output, or an error without ``score_on_error``, is unscorable."""
    if observation.outcome == "product_failure":
        return _failed(f"the target failed: {observation.failure}")
    if observation.outcome is None:
        return _unscorable("no output: the trial has no canonical attempt")
    if observation.outcome == "error" and not score_on_error:
        return _unscorable(f"the trial errored: {observation.failure}")
    return None


def check_field_match(field: str) -> Scorer:
    """Passed when ``output[field] == expected[field]`` (or ``== expected`` if not a mapping)."""

    def score(observation: Observation) -> Verdict:
        if (early := product_gate(observation)) is not None:
            return early
        expected = observation.expected
        if isinstance(expected, dict):
            if field not in expected:
                return _unscorable(f"the expected value has no field {field!r}")
            expected = expected[field]
        output = observation.output
        if not isinstance(output, dict) or field not in output:
            return _failed(f"the output has no field {field!r}")
        if same_value(output[field], expected):
            return PASSED
        return _failed(f"{field} is {output[field]!r}, expected {expected!r}")

    return score


def check_exact(ignore_case: bool = False) -> Scorer:
    """Passed when the output equals the expected value (text is compared stripped)."""

    def score(observation: Observation) -> Verdict:
        if (early := product_gate(observation)) is not None:
            return early
        expected, output = observation.expected, observation.output
        if expected is None:
            return _unscorable("the sample has no expected value")
        if isinstance(expected, str) and _is_completions(output):
            output = output[0]  # several completions: the first is the answer
        if isinstance(expected, str) and isinstance(output, str):
            left, right = output.strip(), expected.strip()
            if ignore_case:
                left, right = left.casefold(), right.casefold()
            return PASSED if left == right else _failed(f"got {output!r}, expected {expected!r}")
        if same_value(output, expected):
            return PASSED
        return _failed(f"got {output!r}, expected {expected!r}")

    return score


def check_includes(ignore_case: bool = False) -> Scorer:
    """Passed when the expected text occurs in the output text."""

    def score(observation: Observation) -> Verdict:
        if (early := product_gate(observation)) is not None:
            return early
        if observation.expected is None:
            return _unscorable("the sample has no expected value")
        needle, haystack = _text(observation.expected), _text(observation.output)
        if ignore_case:
            needle, haystack = needle.casefold(), haystack.casefold()
        return PASSED if needle in haystack else _failed(f"{needle!r} not found in the output")

    return score


def check_regex(pattern: str, ignore_case: bool = False) -> Scorer:
    """Passed when *pattern* matches the output; with a group, the group must equal expected."""
    compiled = re.compile(pattern, re.IGNORECASE if ignore_case else 0)

    def score(observation: Observation) -> Verdict:
        if (early := product_gate(observation)) is not None:
            return early
        match = compiled.search(_text(observation.output))
        if match is None:
            return _failed(f"pattern {pattern!r} does not match the output")
        if compiled.groups == 0:
            return PASSED
        if observation.expected is None:
            return _unscorable("the pattern has a group but the sample has no expected value")
        found, expected = match.group(1), _text(observation.expected)
        return PASSED if found == expected else _failed(f"found {found!r}, expected {expected!r}")

    return score


def same_value(left: Any, right: Any) -> bool:
    """JSON equality: like ``==`` but ``true`` is not ``1`` (Python says it is)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    return bool(left == right)


def _is_completions(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if _is_completions(value):
        return str(value[0])
    return msgspec.json.encode(value).decode()


def build_scorer(spec: ScorerSpec) -> Scorer:
    """The scorer a spec entry describes."""
    if spec.kind == "field_match":
        return check_field_match(spec.field or "")
    if spec.kind == "exact":
        return check_exact(spec.ignore_case)
    if spec.kind == "includes":
        return check_includes(spec.ignore_case)
    return check_regex(spec.pattern or "", spec.ignore_case)
