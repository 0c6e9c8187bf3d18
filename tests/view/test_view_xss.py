"""Hostile text in a run never runs in the viewer: the XSS corpus of report.html's test
(sample ids, outputs, exception messages, scorer ids, the description), shown on every
page of the viewer in headless Chromium.

On each page: no payload ran, no dialog opened, no request went anywhere but the viewer,
nothing even tried (no CSP violation), every payload is shown as text; every response
carries the strict Content-Security-Policy, which blocks a script injected from outside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import read_jsonl, run_cli, write_dataset, write_module, write_spec
from tests.robustness.test_escaping_browser import EVIL_SCORER, EVIL_SCORER_2, PAYLOADS, TARGETS
from tests.view._browser import chromium, screenshot_on_failure
from tests.view._support import served

WATCH = (
    "window.__violations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the corpus (so the compare page has flipped, hostile samples)."""
    root = tmp_path_factory.mktemp("view-xss")
    for name, targets in (
        ("xss", ["echo", "crash", "right"]),
        ("xss-b", ["right"]),
    ):
        folder = root / name
        write_module(folder, "xss_targets", TARGETS.format(payloads=PAYLOADS))
        samples = [
            {"id": payload, "input": f"q{i}", "expected": f"q{i}"}
            for i, payload in enumerate(PAYLOADS)
        ]
        write_dataset(folder, samples)
        kinds = {"echo": "echo_payload", "crash": "crash", "right": "right"}
        spec = write_spec(
            folder,
            {
                "evaluation": "xss",
                "description": PAYLOADS[0] + PAYLOADS[1],
                "dataset": "data.jsonl",
                "targets": [{"id": t, "callable": f"xss_targets:{kinds[t]}"} for t in targets],
                "scorers": [
                    {"id": EVIL_SCORER, "type": "exact"},
                    {"id": EVIL_SCORER_2, "type": "includes"},
                ],
            },
        )
        proc = run_cli("run", spec, "-o", root / "runs" / name)
        assert proc.returncode == 0, proc.stdout + proc.stderr  # nothing gated
    return root / "runs"


def _pages(runs: Path) -> list[str]:
    echo = [t for t in read_jsonl(runs / "xss" / "plan.jsonl") if t["target_id"] == "echo"]
    crash = [t for t in read_jsonl(runs / "xss" / "plan.jsonl") if t["target_id"] == "crash"]
    return [
        "/",
        "/runs/xss/",
        "/runs/xss/trials?target=echo",
        "/runs/xss/trials?status=failed&sort=-sample",
        f"/runs/xss/trials/{echo[0]['trial_id']}",
        f"/runs/xss/trials/{echo[3]['trial_id']}",
        f"/runs/xss/trials/{crash[1]['trial_id']}",
        "/compare?a=xss-b&b=xss",
    ]


def test_no_payload_runs_on_any_page(runs: Path, tmp_path: Path) -> None:
    with chromium() as browser, served(runs) as client:
        base = str(client.base_url)
        for number, path in enumerate(_pages(runs)):
            page = browser.new_page()
            requests: list[str] = []
            dialogs: list[str] = []
            page.on("request", lambda request, seen=requests: seen.append(request.url))
            page.on("dialog", lambda dialog, seen=dialogs: seen.append(dialog.message))
            page.add_init_script(WATCH)
            with screenshot_on_failure(page, tmp_path / f"xss-{number}.png"):
                response = page.goto(base + path, wait_until="networkidle")
                assert response.status == 200, path
                csp = response.headers["content-security-policy"]
                assert csp.startswith("default-src 'none'") and "script-src" not in csp
                assert page.evaluate("typeof window.pwned") == "undefined", path
                assert dialogs == [] and page.evaluate("window.__violations") == [], path
                assert all(url.startswith(base) for url in requests), requests
                assert page.evaluate("document.querySelectorAll('script, iframe').length") == 0
                _shows_payloads_as_text(page, path)
            page.close()


def _shows_payloads_as_text(page: Any, path: str) -> None:
    text = page.evaluate("document.body.innerText")
    if path == "/runs/xss/trials?target=echo":
        for payload in PAYLOADS:  # every sample id is listed, exactly as written
            assert payload in text, payload
        assert EVIL_SCORER in text and EVIL_SCORER_2 in text
    if path == "/runs/xss/":
        assert PAYLOADS[0] + PAYLOADS[1] in text  # the description


def test_the_policy_blocks_a_script_injected_from_outside(runs: Path, tmp_path: Path) -> None:
    with chromium() as browser, served(runs) as client:
        page = browser.new_page()
        page.add_init_script(WATCH)
        with screenshot_on_failure(page, tmp_path / "inject.png"):
            page.goto(str(client.base_url) + "/runs/xss/trials", wait_until="networkidle")
            page.evaluate(
                "() => { const s = document.createElement('script');"
                " s.textContent = 'window.injected = 1'; document.body.appendChild(s);"
                " const b = document.createElement('button');"
                " b.setAttribute('onclick', 'window.injected = 2');"
                " document.body.appendChild(b); b.click(); }"
            )
            page.wait_for_function("window.__violations.length >= 2")
            assert page.evaluate("typeof window.injected") == "undefined"
        page.close()
