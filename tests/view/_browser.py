"""Headless Chromium for the viewer's browser tests (Debian's ``chromium``, driven by
Playwright, nothing downloaded), and a screenshot saved when a browser step fails."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.robustness.test_escaping_browser import ARGS, CHROMIUM, _playwright


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (the test is skipped, saying why, without it or Playwright)."""
    sync_api = _playwright()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                yield browser
            finally:
                browser.close()


@contextmanager
def screenshot_on_failure(page: Any, path: Path) -> Iterator[None]:
    """Run a browser step; if it fails, save the page as *path* and name it in the error."""
    try:
        yield
    except BaseException as exc:
        try:
            page.screenshot(path=str(path), full_page=True)
            note = f"screenshot of the page when it failed: {path}"
        except Exception as shot:  # the page itself may be gone
            note = f"no screenshot ({type(shot).__name__}: {shot})"
        exc.add_note(note)
        print(note)  # in the captured output pytest shows with the failure
        raise
