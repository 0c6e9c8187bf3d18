"""Reports: one Report object rendered as JSON, Markdown and standalone HTML."""

from assay.report._model import MAX_TRIAL_ROWS, REPORT_SCHEMA, Report, TrialRow, TrialRows
from assay.report._render import cost_text, md_escape, to_html, to_json, to_markdown

__all__ = [
    "MAX_TRIAL_ROWS",
    "REPORT_SCHEMA",
    "Report",
    "TrialRow",
    "TrialRows",
    "cost_text",
    "md_escape",
    "to_html",
    "to_json",
    "to_markdown",
]
