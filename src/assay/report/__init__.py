"""Reports: one Report object rendered as JSON, Markdown and standalone HTML; a run's
trials exported as CSV, JSON lines or pandas DataFrames; its gate as JUnit XML."""

from assay.report._export import RunFrames, read_run, trial_rows, write_export
from assay.report._junit import to_junit
from assay.report._model import MAX_TRIAL_ROWS, REPORT_SCHEMA, Report, TrialRow, TrialRows
from assay.report._render import (
    cost_text,
    md_escape,
    to_html,
    to_json,
    to_markdown,
    to_summary,
)

__all__ = [
    "MAX_TRIAL_ROWS",
    "REPORT_SCHEMA",
    "Report",
    "RunFrames",
    "TrialRow",
    "TrialRows",
    "cost_text",
    "md_escape",
    "read_run",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "to_summary",
    "trial_rows",
    "write_export",
]
