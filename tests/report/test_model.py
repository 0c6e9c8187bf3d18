"""``TrialRows.add_judged``: a judged bundle's row, made only when the report lists it.

Past MAX_TRIAL_ROWS most trials are counted and dropped; their usage is still summed, from
the bundle's record, to the totals ``add`` of a made row would give.
"""

from __future__ import annotations

from typing import Any

from assay.evidence import Usage
from assay.report import MAX_TRIAL_ROWS, TrialRow, TrialRows


def _bundle(index: int, usage: dict[str, Any] | None) -> dict[str, Any]:
    bundle: dict[str, Any] = {
        "trial": {
            "index": index,
            "trial_id": f"t-{index:024x}",
            "target_id": "a" if index % 3 else "b",
            "sample_id": f"s{index}",
            "repetition": 1,
        },
        "state": "completed",
        "digest": f"sha256:{index:064x}",
    }
    if usage is not None:
        bundle["usage"] = usage
    return bundle


def _usage(index: int) -> dict[str, Any] | None:
    """Varied records: none, a full one, one priced, one of an older bundle (fields
    missing), one with no price (target "a"'s cost becomes unknown)."""
    full = Usage(input_tokens=index, output_tokens=2, total_tokens=index + 2, calls=1).record()
    return [
        None,
        full,
        {**full, "cost": 0.25, "cached_calls": 1, "cached_cost": 0.25},
        {"input_tokens": 3, "output_tokens": 1, "calls": 1},
        {**full, "cost": None} if index % 3 else full,  # target "a" only
    ][index % 5]


def test_judged_rows_are_the_rows_and_totals_add_gives() -> None:
    planned = MAX_TRIAL_ROWS + 40
    judged, made = TrialRows(planned), TrialRows(planned)
    grading = {"model_graded": Usage(input_tokens=5, output_tokens=1, total_tokens=6, calls=1)}
    for index in range(planned):
        bundle = _bundle(index, _usage(index))
        failing = index % 7 == 0
        scores = {"match": "failed" if failing else "passed"}
        reasons = {"match": "no"} if failing else {}
        graded = grading if index % 4 == 0 else None
        judged.add_judged(bundle, scores, reasons, graded)
        trial = bundle["trial"]
        made.add(
            TrialRow(
                index=index,
                trial_id=trial["trial_id"],
                target_id=trial["target_id"],
                sample_id=trial["sample_id"],
                repetition=1,
                state="completed",
                scores=scores,
                reasons=reasons,
                bundle_digest=bundle["digest"],
                usage=Usage.of(bundle["usage"]) if "usage" in bundle else None,
                grading_usage=graded,
            )
        )
    assert judged.in_plan_order() == made.in_plan_order()
    assert judged.kept() == MAX_TRIAL_ROWS and judged.omitted == made.omitted == 40
    assert judged.usage == made.usage and judged.usage["a"].cost is None
    assert judged.usage["b"].cost == made.usage["b"].cost and judged.usage["b"].cost
    assert judged.grading == made.grading
    assert judged.usage_total() == made.usage_total()


def test_changes_count_the_rows_kept_so_the_list_is_the_same_while_they_are() -> None:
    """``changes`` (what tells a report look-ahead the list moved) counts every row
    kept, a failing one evicting a passing one past the cap too, and no omitted one."""
    rows = TrialRows(MAX_TRIAL_ROWS + 10)
    seen = []
    for index in range(MAX_TRIAL_ROWS + 10):
        before = ([*rows.rows], rows.changes)
        status = "failed" if index == MAX_TRIAL_ROWS + 5 else "passed"
        rows.add_scored(_bundle(index, None), "s", status, "")
        seen.append(rows.changes - before[1])
        assert (rows.changes == before[1]) == (rows.rows == before[0])
    assert seen == [1] * MAX_TRIAL_ROWS + [0] * 5 + [1] + [0] * 4


def test_scored_rows_are_the_judged_rows_past_the_cap_too() -> None:
    """``add_scored`` (one scorer, no grading) keeps the rows, omitted count and usage
    ``add_judged`` keeps; once the list is full a passing row is counted and dropped
    without ``_place``, a failing one still evicts a passing row."""
    planned = MAX_TRIAL_ROWS + 60
    scored, judged = TrialRows(planned), TrialRows(planned)
    for index in range(planned):
        bundle = _bundle(index, _usage(index))
        status = "failed" if index % 9 == 0 or index > MAX_TRIAL_ROWS + 50 else "passed"
        reason = "no" if status == "failed" else ""
        scored.add_scored(bundle, "match", status, reason)
        judged.add_judged(bundle, {"match": status}, {"match": reason} if reason else {}, None)
        assert scored.kept_last == judged.kept_last
    assert scored.in_plan_order() == judged.in_plan_order()
    assert scored.omitted == judged.omitted == 60 and scored.changes == judged.changes
    assert scored.usage == judged.usage
