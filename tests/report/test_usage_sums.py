"""``UsageSums`` sums bundles' usage records a batch at a time to the totals one
``Usage.add_record`` a record gives: integers, costs added in order (floats to the bit),
an unknown cost unknown from then on, older records missing fields."""

from __future__ import annotations

from typing import Any

from assay.evidence import Usage
from assay.report._usage_sums import BATCH, UsageSums


def _record(index: int) -> dict[str, Any]:
    cost = [0.1, 0.2, 1e-9, 3.3333333, 0.0][index % 5]
    record = Usage(index % 7, 3, index % 7 + 3, 1, index % 2, cost, cost * (index % 2)).record()
    if index == 2 * BATCH + 3:
        del record["cached_cost"]  # an older bundle's record: its batch summed one by one
    return record


def test_batches_give_the_totals_of_add_record_one_by_one() -> None:
    sums, one_by_one = UsageSums(), {"a": Usage(), "b": Usage(), "c": Usage()}
    for index in range(3 * BATCH + 17):
        target = "abc"[index % 3] if index < BATCH else "ab"[index % 2]
        record = _record(index)
        if target == "b" and index == BATCH + 1:
            record = {**record, "cost": None}  # b's cost is unknown from here on
        sums.record(target, record)
        one_by_one[target].add_record(record)
        if index % 700 == 0:  # a whole Usage between records: in order too
            extra = Usage(1, 1, 2, 1, 0, 0.7, 0.0)
            sums.add(target, extra)
            one_by_one[target].add(extra)
    totals = sums.by_target()
    assert totals == one_by_one
    assert totals["b"].cost is None and totals["a"].cost and totals["c"].cached_cost is not None


def test_a_target_without_records_has_empty_totals() -> None:
    sums = UsageSums()
    sums.record("a", None)
    sums.add("b", None)
    assert sums.by_target() == {"a": Usage(), "b": Usage()}


def test_a_batch_with_a_count_not_an_int_is_read_as_add_record_reads_it() -> None:
    sums, one_by_one = UsageSums(), Usage()
    for index in range(BATCH):
        record = _record(index)
        if index == 9:
            record["input_tokens"] = 2.0  # int() makes it 2: the totals stay ints
        sums.record("a", record)
        one_by_one.add_record(record)
    totals = sums.by_target()["a"]
    assert totals == one_by_one and type(totals.input_tokens) is int
