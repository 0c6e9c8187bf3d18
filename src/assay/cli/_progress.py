"""The progress display of ``run`` and ``resume`` on stderr.

On a terminal it is a bar drawn by tqdm (imported only then), redrawn in place every
half second and ended when the run ends; elsewhere (a CI log, with ``--progress``) it is
a whole line every ``LOG_EVERY`` seconds and one at the end, so a log does not fill with
carriage returns. Both say the same things: trials done of planned, the rate (seconds
per trial below one a second, never ``0/s``), the running pass rate per target, errors
and retries, tokens and cost when a model was called, and the time left.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, TextIO

from assay._messages import say

if TYPE_CHECKING:
    from assay.pipeline import Progress, ProgressCallback

LOG_EVERY = 10.0
DEFAULT_COLUMNS = 100
"""The line's width when the terminal does not say."""
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt}{postfix}"
"""tqdm's layout: a bar 20 characters wide, then the counts and the details."""


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
        try:
            if self.tty:
                end = "\n" if progress.final else ""
                self.stream.write(f"\r{bar(progress, _columns(self.stream))}\x1b[K{end}")
            elif progress.final or time.monotonic() - self.logged >= LOG_EVERY:
                self.logged = time.monotonic()
                self.stream.write(render(progress) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr went away: the run goes on without the line
            self.stream = None


def render(progress: Progress) -> str:
    """``eval: 1,234/10,000 trials (12%), 412/s, about 0:21 left, pass a 98%, 0 error(s),
    0 retry(ies)`` (the evaluation's name with control characters dropped: it is the
    spec author's text)."""
    done, planned = progress.done, progress.planned
    return say(
        "out.progress",
        evaluation=_printable(progress.evaluation),
        done=f"{done:,}",
        planned=f"{planned:,}",
        percent=f"{100 * done // planned if planned else 100}",
        more=details(progress),
    )


def bar(progress: Progress, columns: int) -> str:
    """The terminal's bar, drawn by tqdm: ``eval:  12%|██▍   | 1234/10000, 412/s, …``, cut
    to *columns* characters so a redraw never wraps."""
    from tqdm import tqdm  # deferred: only a terminal's bar needs it

    line = tqdm.format_meter(
        progress.done,
        progress.planned,
        progress.elapsed,
        ncols=columns,
        prefix=_printable(progress.evaluation),
        bar_format=BAR_FORMAT,
        postfix=details(progress).lstrip(", ，"),
    )
    return str(line)[: columns - 1]


def details(progress: Progress) -> str:
    """What follows the counts: rate and time left first (a narrow terminal cuts the
    end), then pass rates, errors and retries, tokens and cost, and on a cluster its
    workers (a run that slows down because workers left says why)."""
    parts = [rate_text(progress), _left(progress)]
    if progress.pass_rates:
        rates = ", ".join(
            f"{_printable(target)} {passed / scored:.0%}"
            for target, (passed, scored) in progress.pass_rates.items()
            if scored
        )
        parts.append(say("out.progress_pass", rates=rates) if rates else "")
    parts.append(say("out.progress_errors", errors=progress.errors, retries=progress.retries))
    if progress.tokens:
        from assay.report import cost_text  # deferred: keeps the CLI's start-up light

        parts.append(
            say("out.progress_usage", tokens=f"{progress.tokens:,}", cost=cost_text(progress.cost))
        )
    if progress.workers is not None:
        parts.append(say("out.progress_workers", workers=progress.workers))
    return "".join(parts)


def rate_text(progress: Progress) -> str:
    """``, 412/s``; below one trial a second ``, 2.5 s/trial``; nothing before the first
    trial this process finished (never ``0/s``)."""
    rate = progress.rate
    if rate >= 1:
        return say("out.progress_rate", rate=f"{rate:,.0f}")
    if rate > 0:
        return say("out.progress_slow", seconds=f"{1 / rate:,.1f}")
    return ""


def _left(progress: Progress) -> str:
    done, planned, rate = progress.done, progress.planned, progress.rate
    if progress.final or rate <= 0 or done >= planned:
        return ""
    return say("out.progress_left", time=_clock((planned - done) / rate))


def _printable(text: str) -> str:
    return "".join(c for c in text if c.isprintable())


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or DEFAULT_COLUMNS
    except (OSError, ValueError, AttributeError):
        return DEFAULT_COLUMNS


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
