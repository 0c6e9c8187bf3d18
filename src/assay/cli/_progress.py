"""The progress line of ``run`` and ``resume`` on stderr.

On a terminal it is one line redrawn in place and ended when the run ends; elsewhere
(a CI log, with ``--progress``) it is a whole line every ``LOG_EVERY`` seconds and one at
the end, so a log does not fill with carriage returns.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

from assay._messages import say

if TYPE_CHECKING:
    from assay.pipeline import Progress, ProgressCallback

LOG_EVERY = 10.0


def progress_line(wanted: bool | None, stream: TextIO | None = None) -> ProgressCallback | None:
    """The callback for ``--progress/--no-progress`` (unset: only on a terminal)."""
    stream = stream or sys.stderr
    tty = stream.isatty()
    if wanted is False or (wanted is None and not tty):
        return None
    return _ProgressLine(stream, tty)


class _ProgressLine:
    def __init__(self, stream: TextIO, tty: bool) -> None:
        self.stream: TextIO | None = stream
        self.tty = tty
        self.logged = time.monotonic()

    def __call__(self, progress: Progress) -> None:
        if self.stream is None:
            return
        text = render(progress)
        try:
            if self.tty:
                end = "\n" if progress.final else ""
                self.stream.write(f"\r{text}\x1b[K{end}")
            elif progress.final or time.monotonic() - self.logged >= LOG_EVERY:
                self.logged = time.monotonic()
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr went away: the run goes on without the line
            self.stream = None


def render(progress: Progress) -> str:
    """``eval: 1,234/10,000 trials (12%), 412/s, about 0:21 left`` (the evaluation's
    name with control characters dropped: it is the spec author's text)."""
    done, planned, rate = progress.done, progress.planned, progress.rate
    left = ""
    if not progress.final and rate > 0 and done < planned:
        left = say("out.progress_left", time=_clock((planned - done) / rate))
    return say(
        "out.progress",
        evaluation="".join(c for c in progress.evaluation if c.isprintable()),
        done=f"{done:,}",
        planned=f"{planned:,}",
        percent=f"{100 * done // planned if planned else 100}",
        rate=f"{rate:,.0f}",
        left=left,
    )


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
