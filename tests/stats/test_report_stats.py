"""Intervals and paired comparisons in the three reports, with hostile ids kept inert."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import msgspec

from assay.compare import compare_targets
from assay.report import Report, to_html, to_json, to_markdown
from tests.helpers import run_spec_at, simple_spec, write_module

IDS = ["<script>alert(1)</script>", "a|b`c`", "plain", "<img src=x onerror=alert(2)>"]
SOURCE = """
def right(text):
    return text

def wrong_on_odd(text):
    return text if int(text[1:]) % 2 == 0 else "no"
"""


def _two_target_report(tmp_path: Path) -> Report:
    write_module(tmp_path, "stats_report_targets", SOURCE)
    samples = [{"id": sid, "input": f"q{i}", "expected": f"q{i}"} for i, sid in enumerate(IDS)]
    targets = [
        {"id": "right", "callable": "stats_report_targets:right"},
        {"id": "odd", "callable": "stats_report_targets:wrong_on_odd"},
    ]
    spec = simple_spec(tmp_path, samples=samples, targets=targets)
    report: Report = run_spec_at(spec, tmp_path / "run").report
    comparisons = compare_targets(report.trials, report.targets, report.scorers)
    return msgspec.structs.replace(report, comparisons=comparisons)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.bad += [name for name, _ in attrs if name.startswith("on") or name in ("src", "href")]


def test_reports_show_intervals_and_flipped_samples(tmp_path: Path) -> None:
    report = _two_target_report(tmp_path)
    [c] = report.comparisons
    assert (c.a, c.b, c.a_only, c.b_only) == ("right", "odd", 2, 0)
    data = json.loads(to_json(report))
    assert data["comparisons"][0]["test"] == "exact-mcnemar"
    html = to_html(report)
    parser = _Tags()
    parser.feed(html)
    assert {"svg", "line", "circle"} <= parser.tags and not parser.tags & {"script", "img"}
    assert parser.bad == []
    assert 'id="interval-chart"' in html and "wilson" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # a flipped sample, escaped
    md = to_markdown(report)
    assert "<" not in md and ">" not in md
    assert "## Paired comparisons" in md and "95% wilson [" in md
