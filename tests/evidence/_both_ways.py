"""``verify`` run twice over one run: a pass in a worker process, then the same pass in
this process, for the tests that compare the two (``test_verify_worker.py``: the event
pass; ``test_verify_packs.py``: the pack pass)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.evidence import VerifyResult, _verify, verify_run


def verified_both_ways(
    run: Path, monkeypatch: pytest.MonkeyPatch, *, threshold: str, finish: str, what: str
) -> tuple[VerifyResult, VerifyResult]:
    """verify's results with the *what* pass in a worker (``_verify``'s size *threshold*
    lowered to 0) and in this process (raised out of reach). Fails unless the first
    answer really came from the worker, as *finish* (the function of ``_verify`` that
    collects the pass) reports it: a failed worker is redone in-process, which would
    make the two sides equal without the worker having been tested."""
    sources: list[tuple[bool, str]] = []
    collect = getattr(_verify, finish)

    def spy(*args: Any) -> Any:
        scan = collect(*args)
        sources.append((scan.in_worker, scan.fallback))
        return scan

    monkeypatch.setattr(_verify, finish, spy)
    monkeypatch.setattr(_verify, threshold, 0)
    in_worker = verify_run(run)
    assert sources == [(True, "")], f"the {what} pass did not come from the worker: {sources}"
    assert in_worker.notes == []
    monkeypatch.setattr(_verify, threshold, 1 << 60)
    sources.clear()
    here = verify_run(run)
    assert sources == [(False, "")], f"the {what} pass was not this process's: {sources}"
    return in_worker, here
