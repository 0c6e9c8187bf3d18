"""Under CI (``CI`` set) a skipped test fails the run, unless it is marked as not meant for CI.

A skip on a developer's machine says "this part is not installed here"; on CI it would
hide a test that never ran behind a green run. A test skipped while being set up (a
``skipif`` mark) is reported as an error, one skipped at collection (a module-level
``importorskip``) as a collection error, which stops the run. A test that must skip even on CI (say,
one that needs a GPU) says so with ``@pytest.mark.not_for_ci("why")``.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

ON_CI = bool(os.environ.get("CI"))


def _as_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
    reason = str(reason).removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = f"skipped under CI, where nothing may skip: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report = outcome.get_result()
    if (
        ON_CI
        and report.skipped
        and not hasattr(report, "wasxfail")
        and item.get_closest_marker("not_for_ci") is None
    ):
        _as_failure(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, None]:
    outcome = yield
    report = outcome.get_result()
    if ON_CI and report.skipped:  # a module-level importorskip or skip(allow_module_level)
        _as_failure(report)
