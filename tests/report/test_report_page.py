"""report.html as a reviewer uses it, in headless Chromium: each trial opens on what the
model was asked and said, the filters and search work, the page fits 1,280 px and every
state has a badge; report.md reads as plain text; task metrics are in both.

Browser tests use Debian's ``chromium`` through Playwright, as
tests/robustness/test_escaping_browser.py does (skipped, saying so, without them).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import EXIT_FAILED, EXIT_PASSED
from assay.report import MAX_TRIAL_ROWS, TrialRow, TrialRows
from tests.helpers import (
    SHIPPING,
    run_cli,
    unique_callable_spec,
    write_dataset,
    write_module,
    write_spec,
)
from tests.robustness.test_escaping_browser import ARGS, CHROMIUM

TARGETS = """
def careful(text):
    return text


def sloppy(text):
    if text == "q0":
        return "line one\\nline two"  # a wrong answer over two lines
    if text == "q1":
        raise ValueError("first line of the failure\\nsecond line of the failure")
    return text
"""

LONG_ID = "x" * 300  # no place to break: the page must still fit


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page")
    folder = root / "spec"
    write_module(folder, "page_targets", TARGETS)
    ids = ["s0", "s1", LONG_ID]
    write_dataset(folder, [{"id": ids[i], "input": f"q{i}", "expected": f"q{i}"} for i in range(3)])
    spec = write_spec(
        folder,
        {
            "evaluation": "page",
            "dataset": "data.jsonl",
            "targets": [
                {"id": "careful", "callable": "page_targets:careful"},
                {"id": "sloppy", "callable": "page_targets:sloppy"},
            ],
            "scorers": [{"id": "exact", "type": "exact"}, {"id": "has", "type": "includes"}],
            "gate": {"minimum": 1.0},
        },
    )
    proc = run_cli("run", spec, "-o", root / "run")
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    return root / "run" / "report.html"


@pytest.fixture(scope="module")
def page(report: Path) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                opened = browser.new_page(viewport={"width": 1280, "height": 800})
                violations: list[str] = []
                opened.on("console", lambda message: violations.append(message.text))
                opened.goto(report.as_uri(), wait_until="load")
                opened.wait_for_function("document.getElementById('filter-count').textContent")
                yield opened
            finally:
                browser.close()


def _shown(page: Any) -> list[str]:
    """The summaries of the trials the filters leave visible."""
    return list(
        page.evaluate(
            "[...document.querySelectorAll('#trial-list > details')]"
            ".filter(d => !d.hidden).map(d => d.querySelector('summary').innerText)"
        )
    )


def _filter(page: Any, state: str = "", score: str = "", target: str = "", q: str = "") -> None:
    page.select_option("#filter-state", state)
    page.select_option("#filter-score", score)
    page.select_option("#filter-target", target)
    page.fill("#filter-search", q)


def test_the_page_fits_1280_px(page: Any) -> None:
    assert page.evaluate("window.innerWidth") == 1280
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, width
    assert LONG_ID in page.evaluate("document.body.innerText")  # shown, wrapped


def test_a_trial_opens_on_its_input_expected_answer_and_failure(page: Any) -> None:
    trial = "#trial-list > details:nth-child(4)"  # plan order: s0 careful, s0 sloppy, s1 …
    summary = page.inner_text(f"{trial} > summary")
    assert "sloppy · sample s1 · rep 1" in summary, summary
    assert not page.is_visible(f"{trial} pre")  # closed until clicked
    page.click(f"{trial} > summary")
    texts = page.evaluate(
        f"[...document.querySelectorAll('{trial} dt')].map(dt => [dt.innerText, "
        "dt.nextElementSibling.innerText])"
    )
    shown = dict(texts)
    assert shown["input"] == "q1" and shown["expected"] == "q1"
    assert shown["failure"].endswith("first line of the failure\nsecond line of the failure")
    assert page.evaluate(f"document.querySelector('{trial} pre').tagName") == "PRE"
    wrong = "#trial-list > details:nth-child(2)"
    page.click(f"{wrong} > summary")
    answer = page.evaluate(
        f"[...document.querySelectorAll('{wrong} dt')].find(dt => dt.innerText === 'answer')"
        ".nextElementSibling.innerText"
    )
    assert answer == "line one\nline two"  # the line break kept


def test_filters_and_search_narrow_the_trials(page: Any) -> None:
    _filter(page)
    assert len(_shown(page)) == 6
    assert page.inner_text("#filter-count") == "6 of 6 trials shown"
    _filter(page, target="sloppy")
    assert len(_shown(page)) == 3 and all("sloppy" in s for s in _shown(page))
    _filter(page, score="exact=failed")
    failed = _shown(page)
    assert len(failed) == 2 and all("sloppy" in s for s in failed)
    _filter(page, target="careful", score="exact=failed")
    assert _shown(page) == []
    _filter(page, q="LINE TWO")  # the search reads the answers too, in any case
    (found,) = _shown(page)
    assert "sloppy · sample s0" in found
    _filter(page, state="completed")
    assert len(_shown(page)) == 6
    _filter(page)


def test_every_state_and_status_has_a_badge_colour(page: Any) -> None:
    badges = page.evaluate(
        "[...document.querySelectorAll('.badge')].map(b => [b.innerText,"
        " getComputedStyle(b).backgroundColor])"
    )
    seen = {text for text, _ in badges}
    assert {"completed", "passed", "failed"} <= seen, seen
    uncoloured = {text for text, colour in badges if colour in ("rgba(0, 0, 0, 0)", "")}
    assert uncoloured == set()


# --- report.md as text, and task metrics -----------------------------------------------


def test_report_md_reads_as_plain_text(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert run_cli("run", SHIPPING / "eval.yaml", "-o", run).returncode == EXIT_FAILED
    md = (run / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Evaluation shipping-fee\n")
    assert "| buggy-release | failed | fee-matches | 0.6667 |" in md
    assert "order-100" in md and "fee is 10, expected 0" in md
    assert not re.search(r"\\[-.()!#+{}]", md), re.findall(r".{20}\\[-.()!#+{}].{20}", md)


TASKS = """
from assay import Epochs, Sample, Task, accuracy, includes, task
from assay.score import grouped


@task
def quiz():
    samples = [
        Sample(input="q", target="four", id="a1", metadata={"topic": "algebra"}),
        Sample(input="q", target="five", id="a2", metadata={"topic": "algebra"}),
        Sample(input="q", target="four", id="g1", metadata={"topic": "geometry"}),
    ]
    return Task(
        dataset=samples,
        scorer=includes(),
        metrics=[accuracy(), grouped(accuracy(), "topic")],
        epochs=Epochs(2, ["mean", "pass_at_2"]),
    )
"""


def test_task_metrics_are_in_report_md_and_report_html(tmp_path: Path) -> None:
    write_module(tmp_path, "tasks", TASKS)
    run = tmp_path / "run"
    proc = run_cli(
        "run", "tasks.py@quiz", "-m", "mock/a", "-M", "default_output=four", "-o", run,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == EXIT_PASSED, proc.stdout + proc.stderr
    metrics = json.loads((run / "report.json").read_text())["task_metrics"]["mock/a"]["includes"]
    assert metrics["accuracy_by_topic"] == {"algebra": 0.5, "geometry": 1.0, "all": 2 / 3}
    md = (run / "report.md").read_text(encoding="utf-8")
    html = (run / "report.html").read_text(encoding="utf-8")
    for metric, value in (
        ("accuracy", "0.6667"),
        ("accuracy_by_topic · algebra", "0.5000"),
        ("accuracy_by_topic · geometry", "1.0000"),
        ("pass_at_2/accuracy", "0.6667"),
    ):
        assert f"| mock/a | includes | {metric} | {value} |" in md, metric
        assert f"<td>{metric}</td><td>{value}</td>" in html, metric


def _row(index: int, status: str) -> TrialRow:
    return TrialRow(
        index, f"t-{index:024x}", "t", f"s{index}", 1, "completed", {"exact": status}, {}, "d"
    )


def test_past_the_cap_non_passing_trials_are_kept_first() -> None:
    planned = MAX_TRIAL_ROWS + 10
    rows = TrialRows(planned)
    failing = {5, MAX_TRIAL_ROWS + 3, MAX_TRIAL_ROWS + 9}  # two come after the cap is full
    for index in range(planned):
        rows.add(_row(index, "failed" if index in failing else "passed"))
    kept = rows.in_plan_order()
    assert len(kept) == MAX_TRIAL_ROWS and rows.omitted == 10
    assert {row.index for row in kept if row.scores["exact"] == "failed"} == failing
    assert [row.index for row in kept] == sorted(row.index for row in kept)


BIG_TARGET = """
def answer(text):
    return "wrong" if text in ("q3", "q1004") else text
"""


def test_a_report_past_the_cap_says_what_it_left_out(tmp_path: Path) -> None:
    samples = [{"id": f"s{i}", "input": f"q{i}", "expected": f"q{i}"} for i in range(1005)]
    spec = unique_callable_spec(tmp_path / "spec", BIG_TARGET, samples=samples)
    run = tmp_path / "run"
    proc = run_cli("run", spec, "-o", run)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr
    report = json.loads((run / "report.json").read_text())
    assert len(report["trials"]) == MAX_TRIAL_ROWS and report["trials_omitted"] == 5
    failed = [row["sample_id"] for row in report["trials"] if row["scores"]["exact"] != "passed"]
    assert failed == ["s3", "s1004"]  # the last one came after the list was full
    note = "5 trial(s) not listed: a report lists at most 1,000 trials, the non-passing ones first"
    assert note in (run / "report.md").read_text(encoding="utf-8")
    html = (run / "report.html").read_text(encoding="utf-8")
    assert note in html and html.count('<details class="trial"') == MAX_TRIAL_ROWS
