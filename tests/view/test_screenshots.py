"""The screenshots in the docs and the examples' READMEs are made here, by the suite:
the viewer's run list, a run page and a trial's transcript, and a report.html, each in
headless Chromium at 1,280 px.

Every run of the suite makes them (into a temporary folder) and checks they are real
pictures of the pages; ``ASSAY_UPDATE_SCREENSHOTS=1`` writes them over the committed ones
in ``docs/images/``. The test also checks that each committed picture is shown by the
pages that should show it, so a picture cannot go missing from the docs unnoticed.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, run_cli
from tests.view._browser import chromium, screenshot_on_failure
from tests.view._support import plan, served, shipping_run

IMAGES = REPO / "docs" / "images"
WIDTH = 1280
SHOWN_IN = {
    "view-runs.png": ["docs/view.md"],
    "view-run.png": ["docs/view.md", "examples/shipping/README.md"],
    "view-trial.png": ["docs/view.md", "examples/tools/README.md"],
    "report.png": ["docs/report.md", "examples/shipping/README.md"],
}


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (read here, not by the tool that wrote it)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("shots") / "runs"
    task = REPO / "examples" / "tools" / "task.py"
    proc = run_cli("run", f"{task}@arithmetic_tools", "-o", runs / "tools")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shipping_run(runs)
    return runs


def _shoot(page: Any, url: str, path: Path, ready: str, scroll: bool = False) -> None:
    """The page at *url* once *ready* shows, its top (or, with *scroll*, from *ready*)."""
    page.goto(url)
    shown = page.locator(ready).first
    shown.wait_for()
    if scroll:  # its heading at the top of the picture
        shown.evaluate("element => (element.previousElementSibling || element).scrollIntoView()")
    page.screenshot(path=str(path), full_page=False)


def test_the_screenshots_are_made_by_the_suite_and_shown_in_the_docs(
    runs: Path, tmp_path: Path
) -> None:
    update = os.environ.get("ASSAY_UPDATE_SCREENSHOTS") == "1"
    folder = IMAGES if update else tmp_path
    folder.mkdir(exist_ok=True)
    trial = plan(runs / "tools")[0]["trial_id"]
    with chromium() as browser, served(runs) as client:
        page = browser.new_page(viewport={"width": WIDTH, "height": 800})
        base = str(client.base_url)
        with screenshot_on_failure(page, tmp_path / "failed.png"):
            _shoot(page, base + "/", folder / "view-runs.png", 'tr[data-run="tools"]')
            _shoot(page, base + "/runs/shipping/", folder / "view-run.png", "h1")
            _shoot(page, f"{base}/runs/tools/trials/{trial}", folder / "view-trial.png",
                   "#transcript", scroll=True)  # fmt: skip
            _shoot(page, (runs / "shipping" / "report.html").as_uri(), folder / "report.png",
                   "h1")  # fmt: skip
        page.close()
    for name, pages in SHOWN_IN.items():
        width, height = _png_size(folder / name)
        assert (width, height) == (WIDTH, 800), name
        assert (folder / name).stat().st_size > 10_000, f"{name} looks blank"
        assert (IMAGES / name).exists(), (
            f"docs/images/{name} is missing: run with ASSAY_UPDATE_SCREENSHOTS=1"
        )
        for doc in pages:
            text = (REPO / doc).read_text()
            relative = os.path.relpath(IMAGES / name, (REPO / doc).parent)
            assert f"]({relative})" in text, f"{doc} does not show {relative}"
