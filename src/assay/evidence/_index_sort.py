"""Sorting a big index's fixed-size records with numpy: the same bytes as Python's sort.

Why: sealing a run of a few hundred thousand trials sorts millions of index records,
and Python's sort of ``bytes`` objects costs about a microsecond a record; numpy sorts
their big-endian fields as integers. Importing numpy costs about 0.1 s, so only an
index of at least ``NUMPY_FROM`` records is sorted here (``_index._write_sorted``).
"""

from __future__ import annotations

NUMPY_FROM = 200_000
"""Records from which an index is sorted with numpy (its import then pays for itself)."""


def bucketed(chunk: bytes, width: int) -> list[tuple[int, bytes]]:
    """*chunk*'s records by first byte: ``(byte, those records)`` for each byte present,
    the records in their order within *chunk*."""
    import numpy as np

    count = len(chunk) // width
    first = np.frombuffer(chunk, np.uint8)[::width]
    order = np.argsort(first, kind="stable")
    records = np.frombuffer(chunk, np.dtype((np.void, width)))[order].tobytes()
    counts = np.bincount(first, minlength=256)
    out, start = [], 0
    for byte in np.flatnonzero(counts).tolist():
        end = start + int(counts[byte]) * width
        out.append((byte, records[start:end]))
        start = end
    assert start == count * width
    return out


def sorted_records(data: bytes | bytearray, width: int) -> bytes:
    """*data*'s records (at least 8 bytes each) in byte order: sorted by their first
    8 bytes as a big-endian integer, then each run of records sharing those (the same
    digest stored twice, or a one-in-2^64 chance) sorted whole by Python."""
    import numpy as np

    data = bytes(data)
    heads = np.ndarray(len(data) // width, np.dtype(">u8"), data, 0, (width,))
    order = np.argsort(heads, kind="stable")
    records = np.frombuffer(data, np.dtype((np.void, width)))[order].tobytes()
    ordered = heads[order]
    ties = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not len(ties):
        return records
    out, done = bytearray(records), -1
    for at in ties.tolist():
        if at <= done:
            continue
        end = at + 1
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[at]:
            end += 1
        run = sorted(records[i * width : (i + 1) * width] for i in range(at, end + 1))
        out[at * width : (end + 1) * width] = b"".join(run)
        done = end
    return bytes(out)
