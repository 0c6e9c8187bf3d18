"""Work for a run's end done while its trials wait on their models.

After the last answer a run renders its reports and seals its evidence; what of that
is known earlier is done earlier, on the event loop while the trials wait (a network
run at 200 connections leaves its core idle about half the time): the report's
template is loaded (Jinja's import and the compiled template: about 15 ms of CPU),
and the listed trials' details are read, and their HTML made, look by look
(``DetailsAhead``), a slice at a time with the loop run between slices. Neither
starts before ``AHEAD_AFTER``: the run's start (imports, plan, first calls) is on the
critical path too, and a thread importing Jinja then would compete with it for the GIL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from assay.report._html import warm_up

if TYPE_CHECKING:
    from assay.pipeline._run import _Run
    from assay.report._details_ahead import DetailsAhead

AHEAD_AFTER = 0.2
"""Seconds after the trials start before the end's work begins, and between looks."""


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


async def work_ahead(run: _Run, ahead: DetailsAhead | None) -> None:
    """Load the report's template, then look for new listed trials' details every
    ``AHEAD_AFTER`` seconds, until cancelled (when the trials are done)."""
    await anyio.sleep(AHEAD_AFTER)
    warm_up()
    while ahead is not None:
        try:
            for _ in ahead.looking(run.rows.rows):
                await anyio.sleep(0)  # the answers that came meanwhile go first
        except Exception:  # a look only saves time: the end then reads everything
            ahead.broken = True
            return
        await anyio.sleep(AHEAD_AFTER)
