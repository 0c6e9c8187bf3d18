"""Reports: the documented JSON keys, and hostile text made inert in HTML and Markdown.

Sample ids, target outputs and failure messages come from people and programs we do not
control; none of them may become markup in report.html or report.md.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.helpers import SHIPPING, run_spec_at, unique_callable_spec

DOCUMENTED_KEYS = {
    "comparisons",
    "grading_usage",
    "grading_usage_total",
    "task_metrics",
    "evaluation",
    "description",
    "spec_digest",
    "run_status",
    "planned",
    "targets",
    "scorers",
    "metrics",
    "gate",
    "trials",
    "trials_omitted",
    "assay_version",
    "usage",
    "usage_total",
    "schema",
}
ROW_KEYS = {
    "grading_usage",
    "index",
    "trial_id",
    "target_id",
    "sample_id",
    "repetition",
    "state",
    "scores",
    "reasons",
    "bundle_digest",
    "usage",
}

HOSTILE_IDS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click](javascript:alert(3))",
    "pipe|in`code`*and*_under_",
    "line\nbreak <b>bold</b>",
    "&lt;pre-escaped&gt; & ampersand",
]

HOSTILE_TARGET = """
def answer(text):
    if text == "crash":
        raise ValueError("<img src=x onerror=alert(4)> and <script>alert(5)</script>")
    if text == "wrong":
        return "<script>alert(6)</script>"
    return text
"""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    samples = [
        {"id": sample_id, "input": ("crash", "wrong", "ok")[i % 3], "expected": "ok"}
        for i, sample_id in enumerate(HOSTILE_IDS)
    ]
    spec = unique_callable_spec(
        folder / "spec",
        HOSTILE_TARGET,
        samples=samples,
        description="<script>alert('description')</script>",
    )
    out = folder / "run"
    run_spec_at(spec, out)
    return out


def test_report_json_has_the_documented_keys(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_spec_at(SHIPPING / "eval.yaml", out)
    report = json.loads((out / "report.json").read_text())
    assert set(report) == DOCUMENTED_KEYS
    assert report["schema"] == "assay.report/1"
    assert report["planned"] == 6 and report["run_status"] == "complete"
    assert report["targets"] == ["buggy-release", "fixed-release"]
    assert report["scorers"] == ["fee-matches"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert report["spec_digest"] == manifest["spec_digest"]
    assert {"status", "reasons", "targets"} <= set(report["gate"])
    assert {"estimates", "targets"} <= set(report["metrics"])
    for estimate in report["metrics"]["estimates"]:
        assert {"value", "passed", "n", "denominator", "stderr", "statuses"} <= set(estimate)
        assert {"ci_low", "ci_high", "ci_level", "ci_method", "cluster_stderr"} <= set(estimate)
        assert estimate["ci_low"] <= estimate["value"] <= estimate["ci_high"]
    assert all(set(row) == ROW_KEYS for row in report["trials"])
    assert len(report["trials"]) == 6


def test_report_json_keeps_hostile_text_verbatim(hostile_run: Path) -> None:
    report = json.loads((hostile_run / "report.json").read_text())
    assert [row["sample_id"] for row in report["trials"]] == HOSTILE_IDS
    crashed = report["trials"][0]
    assert "<img src=x onerror=alert(4)>" in crashed["reasons"]["exact"]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[tuple[str, str]] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append((tag, name))
            if name in ("src", "href") and value:
                self.urls.append(value)


TEMPLATE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "span", "code",
    "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong", "br", "h3",
    "svg", "g", "line", "circle", "text",  # the interval chart
    "div", "details", "summary", "dl", "dt", "dd", "pre",  # each trial, opened
    "label", "select", "option", "input", "script",  # the filters and their script
}  # fmt: skip


def test_report_html_escapes_every_value(hostile_run: Path) -> None:
    html = (hostile_run / "report.html").read_text()
    parser = _Tags()
    parser.feed(html)
    assert set(parser.tags) <= TEMPLATE_TAGS, set(parser.tags) - TEMPLATE_TAGS
    assert parser.tags.count("script") == 1  # the template's own filter script only
    assert "img" not in parser.tags and "b" not in parser.tags
    assert parser.handlers == []
    assert parser.urls == []  # standalone: no external resources
    assert html.lower().count("<script") == 1
    assert parser.tags.count("details") == len(HOSTILE_IDS)  # one per trial, none from data
    assert "<img" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(4)&gt;" in html
    assert "&amp;lt;pre-escaped&amp;gt;" in html  # escaped once more, shown as typed


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_report_md_makes_hostile_text_inert(hostile_run: Path) -> None:
    md = (hostile_run / "report.md").read_text()
    assert "<" not in md and ">" not in md  # no raw HTML from data
    assert not re.search(r"(?<!\\)\]\(", md)  # no link can form: every ] is escaped
    assert "\\[click\\](javascript:alert(3))" in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md  # parentheses need no escape
    trial_rows = [line for line in md.splitlines() if line.startswith("| ") and "`t-" in line]
    assert len(trial_rows) == len(HOSTILE_IDS)  # the newline in an id did not split a row
    header = next(line for line in md.splitlines() if line.startswith("| # |"))
    for row in trial_rows:
        assert _unescaped_pipes(row) == _unescaped_pipes(header), row
        assert len(re.findall(r"(?<!\\)`", row)) == 2, row  # only around the trial id
