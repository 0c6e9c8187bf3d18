"""``DigestSet``, verify's set of raw digests: a sorted array of fixed-width byte strings.

numpy's ``S`` strings pad with NUL bytes, so the cases that matter are digests that end
in NULs or differ only there: each must be found exactly, never confused with another.
"""

from __future__ import annotations

import hashlib

from assay.evidence._verify_refs import DigestSet


def digests(count: int) -> list[bytes]:
    return [hashlib.sha256(b"%d" % i).digest() for i in range(count)]


def test_digests_that_end_in_nul_bytes_are_told_apart() -> None:
    ending_nul = b"\x07" + b"\x00" * 31
    ending_one = b"\x07" + b"\x00" * 30 + b"\x01"
    all_nul = b"\x00" * 32
    held = DigestSet.of(ending_nul + all_nul)
    assert ending_nul in held
    assert all_nul in held
    assert ending_one not in held
    assert held.missing(ending_one + all_nul + ending_nul + b"\x07" * 32) == [0, 3]
    assert DigestSet.of(ending_one).missing(ending_nul) == [0]


def test_missing_gives_the_absent_indexes_in_order() -> None:
    known = digests(1000)
    held = DigestSet.of(b"".join(known[::2]))
    asked = [known[999], known[0], known[1], known[500], b"\xff" * 32, known[3]]
    assert held.missing(b"".join(asked)) == [0, 2, 4, 5]
    assert held.missing(b"") == []


def test_only_whole_digests_of_the_width_count() -> None:
    known = digests(3)
    held = DigestSet.of(b"".join(known) + b"\x01\x02")  # a partial last digest is left out
    assert all(digest in held for digest in known)
    assert known[0][:31] not in held
    assert known[0].hex() not in held
    assert bytearray(known[0]) not in held  # bytes only, as before
    assert held.missing(known[1] + known[0][:16]) == []  # the partial query is not asked


def test_an_empty_set_holds_nothing() -> None:
    empty = DigestSet()
    assert digests(1)[0] not in empty
    assert empty.missing(b"".join(digests(3))) == [0, 1, 2]


def test_digests_added_after_a_lookup_are_found() -> None:
    first, second, third = digests(3)
    held = DigestSet.of(first)
    assert second not in held
    held.add(second)
    held.extend(bytearray(third))
    assert held.missing(first + second + third) == []
