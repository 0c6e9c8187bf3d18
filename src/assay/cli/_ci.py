"""What a CI job reads beside the exit code: ``--junit FILE`` and the step summary.

``--junit`` is declared here once and used by ``run``, ``resume``, ``score`` and
``gate``; each calls ``write_ci_outputs`` with the report(s) it judged. When
``$GITHUB_STEP_SUMMARY`` names a file (GitHub Actions sets it for every step), the
gate's Markdown summary is appended to it, so the job page shows the verdict and the
failing samples without opening an artifact.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from assay.errors import ConfigError, RunError

if TYPE_CHECKING:
    from assay.report import Report

F = TypeVar("F", bound=Callable[..., Any])

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"

junit_option = click.option(
    "--junit",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the gate as JUnit XML to FILE (a testcase per gated check).",
)
"""``--junit FILE`` of ``run``, ``resume``, ``score`` and ``gate``, declared once."""


def check_junit_path(path: Path | None) -> None:
    """Refuse, before anything runs, a JUnit file whose folder is missing or unwritable:
    a run must not end without the file CI waits for."""
    if path is None:
        return
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        reason = "its folder does not exist or cannot be written"
        raise ConfigError("ci.unwritable", what="--junit", path=str(path), reason=reason)


def write_ci_outputs(reports: list[Report], junit: Path | None) -> None:
    """Write the JUnit file (when asked) and append the step summary (when the CI set
    ``$GITHUB_STEP_SUMMARY``) for *reports*, the runs this command judged."""
    if not reports:
        return
    if junit is not None:
        from assay.report import to_junit

        try:
            junit.write_bytes(to_junit(reports))
        except OSError as exc:
            raise RunError.storage(junit, exc) from exc
    summary = os.environ.get(SUMMARY_ENV)
    if summary:
        _append_summary(Path(summary), reports)


def _append_summary(path: Path, reports: list[Report]) -> None:
    """Append each report's summary; a summary that cannot be written is said on stderr
    and changes nothing else (the verdict is the exit code, not the job page)."""
    from assay.report import to_summary

    try:
        with open(path, "a", encoding="utf-8") as handle:
            for report in reports:
                handle.write(to_summary(report))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        error = ConfigError("ci.unwritable", what=SUMMARY_ENV, path=str(path), reason=reason)
        click.echo(f"assay: {error.one_line()}", err=True)
