"""Work for a run's end done while its trials wait on their models.

After the last answer a run renders its reports and seals its evidence; what of that
is known earlier is done earlier, on the event loop while the trials wait (a network
run at 200 connections leaves its core idle about half the time). The report's
template is loaded (Jinja's import and the compiled template: about 16 ms of CPU) as
soon as the executor has started the first trials (``ramped``): at 200 connections
their requests are out by then and the loop would idle until the first answers, 50 ms
after the first request (a thread loading it at ``AHEAD_AFTER`` took the GIL from the
loop while answers flowed). Then the listed trials' details are read, and their HTML
made, look by look (``DetailsAhead``), a slice at a time with the loop run between
slices, every ``AHEAD_AFTER``; a look that would find nothing new (no row kept since
the last, no line gathered unread) is skipped: once a big run's list is full of its
first passing trials, each look went over its thousand rows for nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from assay.report._html import warm_up

if TYPE_CHECKING:
    from assay.pipeline._run import _Run
    from assay.report._details_ahead import DetailsAhead

AHEAD_AFTER = 0.2
"""Seconds after the template's load before the first look, and between looks."""
RAMP_PASSES = 3
"""Passes of the loop after the executor's last wave started, before the template's
load: a trial's first request leaves in the pass after its connection opens."""


def details_ahead(run: _Run) -> DetailsAhead | None:
    """The reader of *run*'s listed trials' details (None for a dry run). A fresh run
    hands it the lines of its listed trials as they are judged (``run.ahead``); a
    resumed one lets it read them from the file."""
    from assay.report._details_ahead import DetailsAhead

    path = run.writer.path
    if path is None:
        return None
    ahead = DetailsAhead(path, run.writer.store, handed=run.point is None)
    run.ahead = ahead if ahead.handed else None
    return ahead


async def work_ahead(run: _Run, ahead: DetailsAhead | None, ramped: anyio.Event) -> None:
    """Load the report's template once *ramped* is set, then look for new listed trials'
    details every ``AHEAD_AFTER`` seconds, until cancelled (when the trials are done)."""
    await ramped.wait()
    for _ in range(RAMP_PASSES):
        await anyio.sleep(0)  # the last trials started write their requests first
    warm_up()
    await anyio.sleep(AHEAD_AFTER)
    looked = -1  # the rows' ``changes`` when the last look began
    while ahead is not None:
        try:
            rows = run.rows
            if rows.changes != looked or not ahead.idle():  # else it would find nothing new
                looked = rows.changes  # (a row kept during the look: the next one runs)
                for _ in ahead.looking(rows.rows):
                    await anyio.sleep(0)  # the answers that came meanwhile go first
        except Exception:  # a look only saves time: the end then reads everything
            ahead.broken = True
            return
        await anyio.sleep(AHEAD_AFTER)
