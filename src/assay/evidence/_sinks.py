"""Event sinks besides the run directory: an HTTP collector, and a terminal for dry runs.

The run directory always holds the full, verifiable log. ``HttpSink`` also streams the
event lines to a collector in batches (for live dashboards or central storage); a batch
the collector refuses is kept in a local fallback file so nothing is lost, and once more
than ``max_failure_rate`` of the batches have failed the sink reports itself failed and
the run stops. Posting happens on a background thread so the event loop never waits.
"""

from __future__ import annotations

import queue
import sys
import threading
from pathlib import Path
from typing import IO

from assay.errors import RunError


class PrintSink:
    """Writes each event line to a stream (stdout by default): ``--dry-run``."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stdout

    def write_line(self, line: bytes) -> None:
        """Print the line."""
        self._stream.write(line.decode("utf-8") + "\n")

    def close(self) -> None:
        """Flush the stream."""
        self._stream.flush()


class HttpSink:
    """Posts event lines as JSONL batches to *url*; failed batches go to *fallback*."""

    def __init__(
        self,
        url: str,
        fallback: Path | None,
        *,
        batch_size: int = 500,
        max_failure_rate: float = 0.5,
        min_batches: int = 4,
        timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.fallback = fallback
        self.batch_size = batch_size
        self.max_failure_rate = max_failure_rate
        self.min_batches = min_batches
        self.timeout = timeout
        self.sent = 0
        self.failed = 0
        self._batch: list[bytes] = []
        self._queue: queue.Queue[list[bytes] | None] = queue.Queue(maxsize=64)
        self._thread = threading.Thread(target=self._post_loop, name="assay-http-sink", daemon=True)
        self._thread.start()

    def write_line(self, line: bytes) -> None:
        """Buffer *line*; a full batch is handed to the posting thread."""
        self._batch.append(line)
        if len(self._batch) >= self.batch_size:
            self._queue.put(self._batch)
            self._batch = []

    def check(self) -> None:
        """Raise RunError once the failure rate has passed the limit."""
        total = self.sent + self.failed
        if total >= self.min_batches and self.failed / total > self.max_failure_rate:
            raise RunError(
                "sink.failed",
                url=self.url,
                failed=self.failed,
                total=total,
                limit=self.max_failure_rate,
                fallback=str(self.fallback),
            )

    def close(self) -> None:
        """Send what is left and wait for the posting thread."""
        if self._batch:
            self._queue.put(self._batch)
            self._batch = []
        self._queue.put(None)
        self._thread.join()

    def _post_loop(self) -> None:
        import httpx  # deferred: only runs that stream events need it

        with httpx.Client(timeout=self.timeout) as client:
            while (batch := self._queue.get()) is not None:
                body = b"\n".join(batch) + b"\n"
                try:
                    response = client.post(
                        self.url, content=body, headers={"content-type": "application/x-ndjson"}
                    )
                    ok = response.is_success
                except httpx.HTTPError:
                    ok = False
                if ok:
                    self.sent += 1
                else:
                    self.failed += 1
                    self._keep(body)

    def _keep(self, body: bytes) -> None:
        if self.fallback is None:
            return
        with open(self.fallback, "ab") as handle:
            handle.write(body)
