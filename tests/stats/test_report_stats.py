"""Intervals and paired comparisons in the three reports, with hostile ids kept inert."""

from __future__ import annotations

import json
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec

from assay import eval
from assay.compare import compare_targets
from assay.pipeline import rescore_run
from assay.report import Report, to_html, to_json, to_markdown
from tests.helpers import run_cli, run_spec_at, simple_spec, write_module

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
    assert {"svg", "line", "circle"} <= parser.tags and "img" not in parser.tags
    assert html.count("<script") == 1  # the template's own filter script, no other
    assert parser.bad == []
    assert 'id="interval-chart"' in html and "wilson" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # a flipped sample, escaped
    md = to_markdown(report)
    assert "<" not in md and ">" not in md
    assert "## Paired comparisons" in md and "95% wilson [" in md


PARTIAL_TASK = """
from assay import Sample, Task, f1, generate, task


@task
def partial() -> Task:
    samples = [Sample(input=f"q{i}", target=f"alpha beta gamma delta {i}", id=f"s{i}")
               for i in range(30)]
    return Task(dataset=samples, solver=generate(), scorer=f1(), epochs=2)
"""


def _f1_run(folder: Path, answer: Callable[[str], str]) -> Path:
    """A Python task scored by F1 (partial credit) against a mock model, 2 epochs."""
    folder.mkdir()
    (folder / "partial.py").write_text(PARTIAL_TASK)

    def outputs(messages: list[Any]) -> str:
        return answer(messages[-1].text)

    (result,) = eval(
        f"{folder / 'partial.py'}@partial",
        model="mock/x",
        log_dir=folder / "runs",
        model_args={"outputs": outputs},
    )
    assert result.status == "success", result.error
    path: Path = result.path
    return path


def _answer_well(prompt: str) -> str:
    i = int(prompt[1:])
    return f"alpha beta gamma delta {i}" if i % 2 == 0 else f"alpha beta gamma {i}"


def _answer_worse(prompt: str) -> str:
    return "alpha beta" if int(prompt[1:]) % 3 else f"alpha beta gamma {prompt[1:]}"


def test_continuous_scores_get_bootstrap_means_and_a_paired_comparison(tmp_path: Path) -> None:
    good = _f1_run(tmp_path / "good", _answer_well)
    worse = _f1_run(tmp_path / "worse", _answer_worse)
    report = json.loads((good / "report.json").read_text())
    [mean] = report["metrics"]["means"]
    assert mean["ci_method"] == "cluster-bootstrap-percentile" and mean["samples"] == 30
    assert mean["ci_low"] < mean["value"] < mean["ci_high"]
    assert "## Mean scores" in (good / "report.md").read_text()
    assert 'id="means"' in (good / "report.html").read_text()
    again = msgspec.to_builtins(rescore_run(good).metrics.means)  # byte for byte
    assert again == [mean]

    proc = run_cli("compare", good, worse, "--json")
    assert proc.returncode == 0, proc.stderr
    [means, _] = json.loads(proc.stdout)  # repetitions: the clustered test first
    assert (means["measure"], means["test"], means["pairs"]) == ("mean", "sign-test", 30)
    assert means["difference"] < 0 and means["ci_high"] < 0 and means["p_value"] < 0.001
    assert (means["a_only"], means["b_only"]) == (25, 0)
    text = run_cli("compare", good, worse).stdout
    assert "sign test p" in text and "score interval" in text


def test_repetitions_add_per_sample_mean_comparisons_to_the_reports(tmp_path: Path) -> None:
    write_module(tmp_path, "stats_report_reps", SOURCE)
    samples = [{"id": sid, "input": f"q{i}", "expected": f"q{i}"} for i, sid in enumerate(IDS)]
    targets = [
        {"id": "right", "callable": "stats_report_reps:right"},
        {"id": "odd", "callable": "stats_report_reps:wrong_on_odd"},
    ]
    spec = simple_spec(tmp_path, samples=samples, targets=targets, repetitions=2)
    report: Report = run_spec_at(spec, tmp_path / "run").report
    measures = [(c.measure, c.test) for c in report.comparisons]
    assert measures == [("mean", "sign-test"), ("pass_rate", "clustered-mcnemar")]
    mean = report.comparisons[0]
    assert (mean.pairs, mean.a_only, mean.b_only, mean.rate_a, mean.rate_b) == (4, 2, 0, 1.0, 0.5)
    html = to_html(report)
    assert "Largest differences" in html and "tango-score-means" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 1  # the template's own filter script, no other
    md = to_markdown(report)
    assert "### Largest differences" in md and "<" not in md


def test_reports_show_each_comparisons_holm_adjusted_p_value(tmp_path: Path) -> None:
    # three targets make three comparisons: the smallest p-value is multiplied by 3
    write_module(tmp_path, "stats_report_three", SOURCE + "\ndef never(text):\n    return 'no'\n")
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(12)]
    targets = [
        {"id": "right", "callable": "stats_report_three:right"},
        {"id": "odd", "callable": "stats_report_three:wrong_on_odd"},
        {"id": "never", "callable": "stats_report_three:never"},
    ]
    spec = simple_spec(tmp_path, samples=samples, targets=targets)
    report: Report = run_spec_at(spec, tmp_path / "run").report
    comparisons = report.comparisons
    assert len(comparisons) == 3
    smallest = min(comparisons, key=lambda c: c.p_value)
    assert smallest.p_value < 0.01
    assert smallest.p_adjusted == min(1.0, 3 * smallest.p_value)
    assert all(c.p_adjusted >= c.p_value for c in comparisons)
    md = to_markdown(report)
    assert "| p | p (Holm) | test |" in md
    for c in comparisons:
        assert f"| {c.p_value:.4g} | {c.p_adjusted:.4g} | " in md
    html = to_html(report)
    assert "<th>p</th><th>p (Holm)</th>" in html
    cells = f"<td>{smallest.p_value:.4g}</td><td>{smallest.p_adjusted:.4g}</td>"
    assert cells in html
