"""Whether each run still verifies, checked in the background and kept per manifest.

Why in the background: ``verify`` re-derives every digest of a run (seconds on 100,000
trials), and a page must not wait for it. A page asks, waits a moment (enough for a
small run), and otherwise says the check is still going; the answer is kept until the
manifest changes. A run still being written is not verified (it is not sealed yet).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import msgspec

from assay.errors import AssayError
from assay.evidence import MANIFEST

WAIT_SECONDS = 3.0


class Verdict(msgspec.Struct, frozen=True):
    """``verified``, ``changed`` (with what), ``checking``, or ``unsealed``."""

    status: str
    problems: list[str] = []
    more: int = 0


SHOWN_PROBLEMS = 10


class VerifyCache:
    """One verification per version of each run's manifest, run on a worker thread."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-view-verify")
        self._lock = threading.Lock()
        self._runs: dict[Path, tuple[int, Future[Verdict]]] = {}

    def verdict(self, run: Path, status: str, wait: float = WAIT_SECONDS) -> Verdict:
        """The run's verdict, waiting up to *wait* seconds for a check started now."""
        if status == "running":
            return Verdict("unsealed")
        try:
            version = (run / MANIFEST).stat().st_mtime_ns
        except OSError:
            return Verdict("changed", [f"{MANIFEST} is missing"])
        with self._lock:
            known = self._runs.get(run)
            if known is None or known[0] != version:
                known = (version, self._pool.submit(_verify, run))
                self._runs[run] = known
        try:
            return known[1].result(timeout=wait)
        except FutureTimeout:
            return Verdict("checking")

    def close(self) -> None:
        """Stop taking checks; a check under way is left to finish on its daemon thread."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def _verify(run: Path) -> Verdict:
    from assay.evidence import verify_run

    try:
        result = verify_run(run)
    except AssayError as exc:
        return Verdict("changed", [exc.one_line()])
    if result.ok:
        return Verdict("verified")
    shown = result.problems[:SHOWN_PROBLEMS]
    return Verdict("changed", shown, len(result.problems) - len(shown))
