"""``DigestSet``, verify's set of raw digests: packed end to end, looked up many at once.

The cases that matter: digests that end in NUL bytes or differ only there (numpy's ``S``
strings, which it was once built on, pad with NULs), partial digests, and lookups that
cross the chunks the digests are split into: each must be found exactly, never confused
with another.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

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


def test_many_digests_held_as_given_and_added_are_all_looked_up() -> None:
    """Past a few thousand the digests are split and looked up in chunks (and a large
    packed part is held as given): every one is found, across chunk boundaries, with
    the absent ones named at their index."""
    known = digests(10_001)
    held = DigestSet.of(b"".join(known[:9_000]))  # held as given (over 64 KiB)
    held.extend(bytearray(b"".join(known[9_000:10_000])))  # copied in
    asked = known[::-1]  # known[10_000] (never added) first
    assert held.missing(b"".join(asked)) == [0]
    assert known[8_999] in held and known[9_999] in held and known[10_000] not in held
    assert held.missing(b"".join(asked[1:]) + b"\x00" * 32) == [10_000]


def test_verify_does_not_import_numpy(run: Path) -> None:
    """numpy's import is ~0.08 s of CPU and 16 MB in verify's process, more than its
    lookups cost without it (issue 15, item 7)."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom assay.evidence import verify_run\n"
        f"assert verify_run(Path({str(run)!r})).ok\nprint('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
