"""Whether each run still verifies, checked in the background and kept per manifest.

Why in the background: ``verify`` re-derives every digest of a run (seconds on 100,000
trials), and a page must not wait for it. A page asks, waits a moment (a few seconds for
a small run, a fraction of one for a big run), and otherwise says the check is still
going; the answer is kept until the manifest changes. A run still being written is not
verified (it is not sealed yet).

Why in a child process: verifying a big run holds tens of MB while it works; in a child
(``python -c``, one at a time: no copy of the server's memory, no re-import of the
server's main module) that memory is given back when the check ends, and the server
stays small.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import msgspec

from assay.errors import AssayError
from assay.evidence import MANIFEST

WAIT_SECONDS = 3.0
BIG_RUN = 10_000
"""Planned trials from which a page waits only ``BIG_WAIT_SECONDS`` for the verdict."""
BIG_WAIT_SECONDS = 0.1


class Verdict(msgspec.Struct, frozen=True):
    """``verified``, ``changed`` (with what), ``checking``, ``unsealed``, or
    ``unchecked`` (the check itself could not run, with why)."""

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

    def verdict(self, run: Path, status: str, planned: int = 0) -> Verdict:
        """The run's verdict, waiting a moment for a check started now (less for a run
        of more than BIG_RUN planned trials)."""
        wait = WAIT_SECONDS if planned <= BIG_RUN else BIG_WAIT_SECONDS
        if status == "running":
            return Verdict("unsealed")
        try:
            version = (run / MANIFEST).stat().st_mtime_ns
        except OSError:
            return Verdict("changed", [f"{MANIFEST} is missing"])
        with self._lock:
            known = self._runs.get(run)
            if known is None or known[0] != version:
                known = (version, self._pool.submit(self._verify, run))
                self._runs[run] = known
        try:
            return known[1].result(timeout=wait)
        except FutureTimeout:
            return Verdict("checking")

    def _verify(self, run: Path) -> Verdict:
        """Verify *run* in a child process; its verdict comes back as one JSON line."""
        command = [sys.executable, "-c", CHILD, str(run)]
        try:
            done = subprocess.run(command, capture_output=True, check=False, timeout=3600)
            return msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=Verdict)
        except (OSError, subprocess.SubprocessError, IndexError, msgspec.DecodeError):
            return Verdict("unchecked", ["the verification process failed: run assay verify"])

    def close(self) -> None:
        """Stop taking checks; a check under way is left to finish."""
        self._pool.shutdown(wait=False, cancel_futures=True)


CHILD = (
    "import sys, msgspec\n"
    "from pathlib import Path\n"
    "from assay.view._verified import verify_in_child\n"
    "print(msgspec.json.encode(verify_in_child(Path(sys.argv[1]))).decode())\n"
)
"""What the verification child runs: ``verify_in_child``, its verdict printed as JSON."""


def verify_in_child(run: Path) -> Verdict:
    """``verify_run`` as a verdict (run in the verification child process)."""
    from assay.evidence import verify_run

    try:
        result = verify_run(run)
    except AssayError as exc:
        return Verdict("changed", [exc.one_line()])
    if result.ok:
        return Verdict("verified")
    shown = result.problems[:SHOWN_PROBLEMS]
    return Verdict("changed", shown, len(result.problems) - len(shown))
