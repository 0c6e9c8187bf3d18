"""The viewer in headless Chromium: the pages render, the filters work, and a trial's
transcript is reached from the run list in three clicks (run, sample table, trial).

A failing step saves a screenshot of the page and names it in the failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, run_cli
from tests.view._browser import chromium, screenshot_on_failure
from tests.view._support import plan, served, shipping_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tools example (a model calling tools: a transcript) and the shipping example."""
    runs = tmp_path_factory.mktemp("browser") / "runs"
    task = REPO / "examples" / "tools" / "task.py"
    proc = run_cli("run", f"{task}@arithmetic_tools", "-o", runs / "tools")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shipping_run(runs)
    return runs


@pytest.fixture(scope="module")
def browser(runs: Path) -> Any:
    with chromium() as browser:
        yield browser


def test_a_transcript_is_three_clicks_from_the_run_list(
    runs: Path, browser: Any, tmp_path: Path
) -> None:
    first = plan(runs / "tools")[0]["trial_id"]
    with served(runs) as client:
        page = browser.new_page()
        with screenshot_on_failure(page, tmp_path / "three-clicks.png"):
            page.goto(str(client.base_url) + "/")
            page.click('tr[data-run="tools"] a.run-link')  # 1: the run
            page.click("#samples-link")  # 2: its sample table
            page.click(f"a.trial-link:text('{first}')")  # 3: the trial
            transcript = page.locator("#transcript")
            transcript.wait_for()
            text = transcript.inner_text()
            assert "turn 1" in text and "call multiply(" in text and "result multiply" in text
            assert page.locator("#model-calls tbody tr").count() >= 1
            assert page.url.endswith(f"/runs/tools/trials/{first}")
        page.close()


def test_the_filters_work_in_the_browser(runs: Path, browser: Any, tmp_path: Path) -> None:
    fixed = [t["trial_id"] for t in plan(runs / "shipping") if t["target_id"] == "fixed-release"]
    with served(runs) as client:
        page = browser.new_page()
        with screenshot_on_failure(page, tmp_path / "filters.png"):
            page.goto(str(client.base_url) + "/runs/shipping/trials")
            assert page.locator("#trials tbody tr").count() == 6
            page.select_option("select[name=target]", "fixed-release")
            page.click("#apply")
            page.wait_for_url("**target=fixed-release**")
            assert page.locator("a.trial-link").all_inner_texts() == fixed
            page.select_option("select[name=target]", "")
            page.select_option("select[name=status]", "failed")
            page.click("#apply")
            page.wait_for_url("**status=failed**")
            rows = page.locator("#trials tbody tr")
            assert rows.count() == 1 and "order-100" in rows.inner_text()
        page.close()
