"""The standalone HTML report: Jinja with autoescape, one inline script allowed by its hash.

The Markdown and summary text live in ``_render.py``; the page reuses its helpers (gate note,
usage and grading rows) so both say the same thing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
from collections.abc import Iterable
from functools import cache, partial
from typing import TYPE_CHECKING, TypeAlias

from assay.report._chart import interval_chart
from assay.report._details import TrialDetail
from assay.report._model import Report, TrialRow
from assay.report._render import (
    COMPARISONS_NOTE,
    cost_text,
    gate_note,
    grading_rows,
    has_usage,
    omitted_note,
    task_metric_rows,
)

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup


def warm_up() -> None:
    """Load Jinja and the compiled report template now (about 16 ms of CPU), while the
    trials wait on their models, so that rendering the report at the end finds it
    loaded (about 50 ms of a 0.7 s run). On the caller's thread: the run's loop calls it
    in the idle wait for the first answers (``pipeline._ahead``); a thread loading it
    later held the GIL against the loop while answers flowed."""
    with contextlib.suppress(Exception):  # rendering will say what is wrong, if anything
        _environment().get_template("report.html.j2")


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # deferred: only writing HTML needs it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("assay.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=compiled_templates(),
    )


def compiled_templates() -> jinja2.BytecodeCache | None:
    """Jinja's cache of compiled templates, or ``None`` when it cannot be had.

    Why: compiling the report template costs 0.1-0.3 s, more than a small run's trials
    (issue 13). Jinja's default folder is a per-user one under the temp directory that it
    creates with mode 0700 and refuses when another user owns it or could write to it
    (then there is no cache); entries are keyed by the template's source, so an upgraded
    template is compiled afresh. A cache that cannot be written never fails a report:
    it only costs the compile.
    """
    import jinja2

    class QuietCache(jinja2.FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        return QuietCache()
    except (OSError, RuntimeError):  # RuntimeError: jinja found the folder unsafe
        return None


SCRIPT_NAME = "report.js"
"""The page's one script (filters and search), inline and allowed by its hash alone."""


@cache
def page_script() -> tuple[str, str]:
    """(the filter script's text, its CSP source ``'sha256-…'``): the Content-Security-
    Policy runs that exact script and nothing else, so text from a run can never run
    even if it got past escaping."""
    import pkgutil  # the package's loader reads the file: 0.6 ms, importlib.resources 2

    data = pkgutil.get_data("assay.report", f"templates/{SCRIPT_NAME}")
    assert data is not None  # None only for a loader that cannot read data
    text = data.decode("utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return text, f"'sha256-{digest}'"


def trial_filters(report: Report) -> dict[str, list[str]]:
    """The choices of the page's filters: the states, ``scorer=status`` pairs and
    targets its listed trials have, in the order first seen."""
    states: dict[str, None] = {}
    scores: dict[str, None] = {}
    targets: dict[str, None] = {}
    for row in report.trials:
        states.setdefault(row.state, None)
        targets.setdefault(row.target_id, None)
        for scorer_id, status in row.scores.items():
            scores.setdefault(f"{scorer_id}={status}", None)
    return {"states": list(states), "scores": sorted(scores), "targets": list(targets)}


def to_html(
    report: Report, details: dict[str, TrialDetail] | None = None, made: RowsMade | None = None
) -> str:
    """A standalone HTML page; every value is escaped by the template engine. *details*
    (by trial id) are what each listed trial shows when opened; *made*: listed trials'
    HTML made while the run went on (``trial_rows``)."""
    template = _environment().get_template("report.html.j2")
    script, script_hash = page_script()
    return template.render(
        report=report,
        chart=interval_chart(report),
        cost_text=cost_text,
        usage=has_usage(report),
        grading_rows=grading_rows(report),
        gate_note=gate_note(report),
        comparisons_note=COMPARISONS_NOTE,
        task_metric_rows=task_metric_rows(report),
        details=details or {},
        filters=trial_filters(report),
        omitted_note=omitted_note(report),
        script=script,
        script_hash=script_hash,
        trial_rows=trial_rows if not made else partial(trial_rows, made=made),
    )


RowsMade: TypeAlias = dict[str, tuple[TrialRow, TrialDetail | None, str]]
"""Listed trials' HTML made ahead (``trial_row``), by trial id, with what it was made of."""


def trial_rows(
    rows: Iterable[TrialRow], details: dict[str, TrialDetail], made: RowsMade | None = None
) -> Markup:
    """The page's listed trials, each a ``<details>`` that opens on its texts and
    scores, every value escaped as the template escapes it. Made here, not by a Jinja
    loop: a report lists up to a thousand trials, and the loop's per-row machinery
    (a context, a ``set``, the nested loop) was two thirds of rendering the page.
    *made*: rows made while the run went on, used when made of the same row and detail."""
    from markupsafe import Markup

    out = []
    for row in rows:
        detail = details.get(row.trial_id)
        ahead = made.get(row.trial_id) if made else None
        if ahead is not None and ahead[0] == row and ahead[1] == detail:
            out.append(ahead[2])
        else:
            out.append(trial_row(row, detail))
    return Markup("".join(out))


def trial_row(row: TrialRow, detail: TrialDetail | None) -> str:
    """One listed trial's ``<details>`` (see ``trial_rows``)."""
    from markupsafe import escape

    state, target = escape(row.state), escape(row.target_id)
    out = [
        f'<details class="trial" data-state="{state}" data-target="{target}"'
        f' data-scores="{escape(scores_json(row.scores))}">\n'
        f'<summary>{escape(row.index)} · <span class="badge {state}">{state}</span>'
        f" <code>{escape(row.trial_id)}</code> {target} · sample {escape(row.sample_id)}"
        f" · rep {escape(row.repetition)} · {score_badges(row.scores)}</summary>\n<dl>\n"
    ]
    if detail:
        out.append(
            f"<dt>input</dt><dd><pre>{escape(detail.input)}</pre></dd>\n"
            f"<dt>expected</dt><dd><pre>{escape(detail.expected)}</pre></dd>\n"
            f"<dt>answer</dt><dd><pre>{escape(detail.answer)}</pre></dd>\n"
        )
        if detail.failure:
            out.append(f"<dt>failure</dt><dd><pre>{escape(detail.failure)}</pre></dd>")
    for scorer_id, status in row.scores.items():
        reason = row.reasons.get(scorer_id)
        shown = f"<pre>{escape(reason)}</pre>" if reason else ""
        badge = escape(status)
        out.append(
            f'<dt><span class="badge {badge}">{badge}</span> {escape(scorer_id)}</dt>'
            f"<dd>{shown}</dd>\n"
        )
    out.append("</dl>\n</details>\n")
    return "".join(out)


def scores_json(scores: dict[str, str]) -> str:
    """A listed trial's ``data-scores``: its ``scorer=status`` pairs as a JSON list, for
    the page's filter. Made here, not by Jinja's filters: a report lists up to a few
    thousand trials, and the filters' chain cost a quarter of rendering them."""
    return json.dumps([f"{scorer_id}={status}" for scorer_id, status in scores.items()])


def score_badges(scores: dict[str, str]) -> Markup:
    """A listed trial's scores in its summary line, ``<badge> scorer`` comma-separated,
    every value escaped as the template escapes it (Jinja's ``loop.last`` looks ahead
    through an iterator per row: a tenth of rendering a thousand rows; ``Markup.format``
    a third of what was left)."""
    from markupsafe import Markup, escape

    badges = []
    for scorer_id, status in scores.items():
        badge = escape(status)
        badges.append(f'<span class="badge {badge}">{badge}</span> {escape(scorer_id)}')
    return Markup(", ".join(badges))
