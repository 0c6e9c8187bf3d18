"""Bundles naming odd things, which verify's fast paths set aside: the findings stay as
they were before those paths (issue 15, item 7: verify without numpy, fold keys taken
while the event pass runs).
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import verify_run


def edit_bundles(run: Path, edit: dict[int, tuple[bytes, bytes]]) -> list[bytes]:
    """Replace, on each bundle line (0-based) of *edit*, the first match of a pattern."""
    path = run / "bundles.jsonl"
    lines = path.read_bytes().split(b"\n")
    for index, (pattern, replacement) in edit.items():
        lines[index] = re.sub(pattern, replacement, lines[index], count=1)
    path.write_bytes(b"\n".join(lines))
    return lines


def test_a_trial_id_that_is_a_number_leaves_the_bundle_events_unchecked(run: Path) -> None:
    """Its fold cannot be keyed: the bundles' event lists are named unreadable (as when
    they were keyed after the event pass), and the bundle's own findings still listed."""
    lines = edit_bundles(run, {1: (rb'"trial_id":"[^"]*"', b'"trial_id":123')})
    assert len(lines) > 3
    edit_bundles(run, {2: (rb'"digest":"sha256:.', b'"digest":"sha256:X')})  # read on
    problems = verify_run(run).problems
    unreadable = "bundles.jsonl: cannot be checked (AttributeError: 'int' object has no"
    assert [p for p in problems if p.startswith(unreadable)], problems
    assert "bundles.jsonl:2 (trial 123): trial is not in the plan" in problems
    assert [p for p in problems if p.startswith("bundles.jsonl:3 ")], problems


def test_artifacts_of_bundles_naming_odd_digests_are_looked_up_too(run: Path) -> None:
    """A bundle naming a digest in upper case is kept whole; the other artifacts it
    names are still looked up (all such bundles' at once): only the missing one and the
    upper-case ones are named."""
    upper = (rb'"sample":"([0-9a-f]{64})"', lambda m: b'"sample":"%s"' % m[1].upper())
    lines = edit_bundles(run, {0: upper, 1: upper})
    output = re.search(rb'"output":"([0-9a-f]{64})"', lines[1])
    assert output is not None
    edit_bundles(run, {1: (b'"output":"' + output[1], b'"output":"' + b"0" * 64)})
    named = [
        (p.split(" ", 1)[0], p.split("): ", 1)[1].split(" (")[0])
        for p in verify_run(run).problems
        if "is missing or altered" in p
    ]
    assert named == [
        ("bundles.jsonl:1", "artifact sample"),
        ("bundles.jsonl:2", "artifact output"),
        ("bundles.jsonl:2", "artifact sample"),
    ]
