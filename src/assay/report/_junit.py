"""A run's gate as JUnit XML, the format CI systems show as a test report.

Each gated check (a target the gate judged) is a testcase, and each non-passing trial of
it is a testcase under it (classname ``<evaluation>.<target>``), so a CI page lists what
failed and why. The mapping (documented in ``docs/cli.md``):

    passed        a testcase with no child
    failed        <failure message="failed: <first reason>">all reasons</failure>
    inconclusive  <skipped message="inconclusive: <first reason>">: neither pass nor fail
    stopped       <error message="stopped: <cause>">: the run could not be judged
    ungated       one testcase ``gate``, <skipped message="not gated: ...">

A trial's score maps the same way: ``failed`` is a failure (told in ``<system-out>``
instead when its check passed: the gate allowed it), any other status that is not
``passed`` (``error``, ``unscorable``, a blocked or invalid trial's) is skipped as
inconclusive. Passing trials are not listed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from assay.gate import TargetDecision
from assay.report._model import Report, TrialRow

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: object) -> str:
    """*value* as text XML 1.0 can hold: characters it forbids (most control characters)
    are written as ``\\x1b``-style escapes, so hostile text cannot break the file."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))


def to_junit(reports: list[Report]) -> bytes:
    """One ``<testsuites>`` with a ``<testsuite>`` per report (a Python task's run has
    one per task × model unit), UTF-8 with an XML declaration."""
    root = ET.Element("testsuites", name="assay")
    for report in reports:
        root.append(_suite(report))
    _count(root, list(root))
    ET.indent(root)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written + b"\n"


def _suite(report: Report) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_text(report.evaluation))
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("gate", report.gate.status),
        ("spec_digest", report.spec_digest),
        ("run_status", report.run_status),
        ("planned", report.planned),
        ("trials_not_listed", report.trials_omitted),
    ):
        ET.SubElement(properties, "property", name=name, value=xml_text(value))
    checks = [d for d in report.gate.targets if d.gated or d.status == "inconclusive"]
    if report.gate.status == "stopped":
        case = _case(suite, report.evaluation, "gate")
        cause = report.gate.reasons[0] if report.gate.reasons else "a fatal error"
        _mark(case, "error", f"stopped: {cause}", "\n".join(report.gate.reasons))
    elif not checks:
        case = _case(suite, report.evaluation, "gate")
        reason = report.gate.reasons[0] if report.gate.reasons else "not gated"
        _mark(case, "skipped", reason, "")
    for decision in checks:
        _check_cases(suite, report, decision)
    _count(suite, suite.findall("testcase"))
    return suite


def _check_cases(suite: ET.Element, report: Report, decision: TargetDecision) -> None:
    """The testcase of one target's check, then one per non-passing trial of it."""
    case = _case(suite, report.evaluation, decision.target_id)
    first = decision.reasons[0] if decision.reasons else ""
    detail = "\n".join(decision.reasons)
    if decision.status == "failed":
        _mark(case, "failure", f"failed: {first}", detail)
    elif decision.status == "inconclusive":
        _mark(case, "skipped", f"inconclusive: {first}", detail)
    elif decision.status != "passed":
        _mark(case, "error", f"{decision.status}: {first}", detail)
    scorers = list(decision.pass_rates) or report.scorers
    classname = f"{report.evaluation}.{decision.target_id}"
    for row in report.trials:
        if row.target_id == decision.target_id:
            for scorer_id in scorers:
                _trial_case(suite, classname, row, scorer_id, decision.status == "passed")


def _trial_case(
    suite: ET.Element, classname: str, row: TrialRow, scorer_id: str, allowed: bool
) -> None:
    """A non-passing trial's testcase; under a check that passed (*allowed*: the gate's
    minimum tolerates it) a failed score is told in ``<system-out>``, not as a failure,
    so the file never counts a failure the gate did not."""
    status = row.scores.get(scorer_id, "missing")
    if status == "passed":
        return
    name = f"{scorer_id} · sample {row.sample_id} · rep {row.repetition} ({row.trial_id})"
    case = _case(suite, classname, name)
    reason = row.reasons.get(scorer_id, "")
    message = f"{status}: {reason}" if reason else status
    if status == "failed" and allowed:
        ET.SubElement(case, "system-out").text = xml_text(f"{message} (within the gate)")
    elif status == "failed":
        _mark(case, "failure", message, f"trial {row.trial_id} ({row.state})")
    else:
        _mark(case, "skipped", f"inconclusive: {message}", "")


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=xml_text(classname), name=xml_text(name))


def _mark(case: ET.Element, kind: str, message: str, text: str) -> None:
    child = ET.SubElement(case, kind, message=xml_text(message))
    if text:
        child.text = xml_text(text)


def _count(element: ET.Element, cases: list[ET.Element]) -> None:
    """The ``tests``/``failures``/``errors``/``skipped`` attributes over *cases* (a
    ``<testsuites>`` sums its suites')."""
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for case in cases:
        if case.tag == "testsuite":
            for key in totals:
                totals[key] += int(case.get(key, "0"))
            continue
        totals["tests"] += 1
        totals["failures"] += case.find("failure") is not None
        totals["errors"] += case.find("error") is not None
        totals["skipped"] += case.find("skipped") is not None
    for key, value in totals.items():
        element.set(key, str(value))
