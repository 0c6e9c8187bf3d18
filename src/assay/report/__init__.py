"""Reports: one Report object rendered as JSON, Markdown and standalone HTML; a run's
trials exported as CSV, JSON lines or pandas DataFrames; its gate as JUnit XML.

The export and JUnit names load on first use (PEP 562): every run renders its reports,
and need not pay for ``csv`` or ``xml.etree`` to do so.
"""

import importlib as _importlib
import typing as _typing

from assay.report._html import to_html
from assay.report._model import MAX_TRIAL_ROWS, REPORT_SCHEMA, Report, TrialRow, TrialRows
from assay.report._render import cost_text, md_escape, to_json, to_markdown, to_summary

if _typing.TYPE_CHECKING:
    from assay.report._export import RunFrames, read_run, trial_rows, write_export
    from assay.report._junit import to_junit
    from assay.report._read import read_report

_LAZY = {
    "RunFrames": "assay.report._export",
    "read_run": "assay.report._export",
    "trial_rows": "assay.report._export",
    "write_export": "assay.report._export",
    "to_junit": "assay.report._junit",
    "read_report": "assay.report._read",
}


def __getattr__(name: str) -> _typing.Any:
    """Import an export or JUnit name from its module the first time it is asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.report' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_TRIAL_ROWS",
    "REPORT_SCHEMA",
    "Report",
    "RunFrames",
    "TrialRow",
    "TrialRows",
    "cost_text",
    "md_escape",
    "read_report",
    "read_run",
    "to_html",
    "to_json",
    "to_junit",
    "to_markdown",
    "to_summary",
    "trial_rows",
    "write_export",
]
