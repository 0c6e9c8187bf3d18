"""Escaping, checked in a real browser: hostile text in report.html never runs.

Sample ids, target outputs, exception messages, scorer ids and the description all carry
HTML/JS payloads, each of which would set ``window.pwned`` or change ``document.title`` if
the browser ever treated it as markup. The report is loaded in headless Chromium
(Debian's ``chromium``, driven by Playwright, nothing downloaded) and the test asserts:
no payload ran, no element or attribute came from data, no request left the page, the
text is shown verbatim; and, independently of escaping, the page's Content-Security-Policy
blocks any script, inline handler or fetch that would get in anyway.

Markdown escaping is tested in tests/report. Needs ``apt-get install chromium`` and
``pip install playwright`` (no ``playwright install``): skipped, saying so, without them.
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, wait_for, write_dataset, write_module, write_spec

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

PAYLOADS = [
    "<script>window.pwned=1;document.title='pwned'</script>",
    "<img src=x onerror=\"window.pwned=2;document.title='pwned'\">",
    '<svg onload="window.pwned=3"><circle r=9 /></svg>',
    '<a href="javascript:window.pwned=4">click me</a>',
    "</script><script>window.pwned=5</script>",
    '"><script>window.pwned=6</script>',
    "'><img src=x onerror=window.pwned=7>",
    '<iframe srcdoc="<script>parent.pwned=8</script>"></iframe>',
    "<style>body{background:url(http://127.0.0.1:9/css)}</style>",
    '<meta http-equiv="refresh" content="0;url=javascript:window.pwned=9">',
    '<base href="http://127.0.0.1:9/">',
    "<body onload=window.pwned=10>",
    "<details open ontoggle=window.pwned=11>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.pwned=12>",
    "javascript:window.pwned=13",
    '<object data="javascript:window.pwned=14"></object>',
    "<input autofocus onfocus=window.pwned=15>",
    "<!--<img src=x onerror=window.pwned=16>-->",
    "{{ 7*7 }} {% raw %}",
]
EVIL_SCORER = "exact<script>window.pwned=20</script>"
EVIL_SCORER_2 = '"><svg onload=window.pwned=21>'

TARGETS = """
PAYLOADS = {payloads!r}


def echo_payload(text):
    return PAYLOADS[int(text[1:])]  # a wrong answer that quotes the payload


def crash(text):
    raise ValueError(PAYLOADS[int(text[1:])])


def right(text):
    return text
"""


def _playwright() -> Any:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    return sync_api


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _playwright()
    root = tmp_path_factory.mktemp("xss")
    folder = root / "spec"
    write_module(folder, "xss_targets", TARGETS.format(payloads=PAYLOADS))
    samples = [
        {"id": payload, "input": f"q{i}", "expected": f"q{i}"} for i, payload in enumerate(PAYLOADS)
    ]
    write_dataset(folder, samples)
    spec = write_spec(
        folder,
        {
            "evaluation": "xss",
            "description": PAYLOADS[0] + PAYLOADS[1],
            "dataset": "data.jsonl",
            "targets": [
                {"id": "echo", "callable": "xss_targets:echo_payload"},
                {"id": "crash", "callable": "xss_targets:crash"},
                {"id": "right", "callable": "xss_targets:right"},
            ],
            "scorers": [
                {"id": EVIL_SCORER, "type": "exact"},
                {"id": EVIL_SCORER_2, "type": "includes"},
            ],
            "gate": {"minimum": 1.0},
        },
    )
    proc = run_cli("run", spec, "-o", root / "run")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # echo and crash fail the gate
    return root / "run" / "report.html"


@pytest.fixture(scope="module")
def browser(report: Path) -> Iterator[Any]:
    sync_api = _playwright()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                yield chromium
            finally:
                chromium.close()


class Loaded:
    """A page with report.html loaded, and what happened while it loaded."""

    def __init__(self, browser: Any, report: Path) -> None:
        self.page = browser.new_page()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.failed: dict[str, str] = {}
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("requestfailed", lambda r: self.failed.setdefault(r.url, r.failure or ""))
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(
            "window.__violations = [];"
            "document.addEventListener('securitypolicyviolation',"
            " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
        )
        self.url = report.as_uri()
        # loaded, and no request for 500 ms: a payload that had run and fetched would show
        self.page.goto(self.url, wait_until="networkidle")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def js(self, expression: str) -> Any:
        return self.page.evaluate(expression)


@contextmanager
def _opened(browser: Any, report: Path) -> Iterator[Loaded]:
    page = Loaded(browser, report)
    try:
        yield page
    finally:
        page.page.close()


@pytest.fixture(scope="module")
def loaded(browser: Any, report: Path) -> Iterator[Loaded]:
    """The page the read-only tests share, as it loaded."""
    with _opened(browser, report) as page:
        yield page


@pytest.fixture
def own_page(browser: Any, report: Path) -> Iterator[Loaded]:
    """A page of its own, for a test that changes it (the shared one stays as loaded)."""
    with _opened(browser, report) as page:
        yield page


def test_no_payload_ran(loaded: Loaded) -> None:
    assert loaded.js("typeof window.pwned") == "undefined"
    assert loaded.js("document.title").startswith("assay · xss · ")
    assert loaded.dialogs == []
    assert loaded.js("window.__violations") == []  # nothing even tried: it is all text


def test_no_request_left_the_page(loaded: Loaded) -> None:
    assert loaded.requests == [loaded.url]


def test_no_element_or_attribute_came_from_data(loaded: Loaded) -> None:
    hostile_tags = "script, img, iframe, object, embed, base, input, details, math, a, style, meta"
    tags = loaded.js(
        f"[...document.querySelectorAll('{hostile_tags}')]"
        ".filter(e => !(e.tagName === 'STYLE' && e.parentElement === document.head))"
        ".filter(e => !(e.tagName === 'META' && e.parentElement === document.head))"
        # the template's own: one details per trial, the search box, the filter script
        ".filter(e => !(e.tagName === 'DETAILS' && e.className === 'trial'"
        "  && e.parentElement.id === 'trial-list'))"
        ".filter(e => !(e.tagName === 'INPUT' && e.id === 'filter-search'"
        "  && e.parentElement.parentElement.id === 'filters'))"
        ".filter(e => !(e.tagName === 'SCRIPT' && e === document.body.lastElementChild))"
        ".map(e => e.outerHTML.slice(0, 80))"
    )
    assert tags == []
    trials = len(PAYLOADS) * 3  # every sample × the three targets
    assert loaded.js("document.querySelectorAll('details').length") == trials
    assert loaded.js("document.querySelectorAll('input').length") == 1
    assert loaded.js("document.querySelectorAll('script').length") == 1
    assert loaded.js("document.querySelectorAll('head > style').length") == 1
    svgs = loaded.js("[...document.querySelectorAll('svg')].map(e => e.id)")
    assert set(svgs) <= {"interval-chart"}, svgs  # only the template's own chart
    risky = loaded.js(
        "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes]"
        ".filter(a => a.name.startsWith('on') ||"
        " ['href', 'src', 'srcdoc', 'data', 'action', 'formaction', 'xlink:href'].includes(a.name))"
        ".map(a => e.tagName + ' ' + a.name + '=' + a.value))"
    )
    assert risky == []


def test_the_payloads_are_shown_as_text(loaded: Loaded) -> None:
    text = loaded.js("document.body.innerText")
    for payload in PAYLOADS:
        # each sample id is listed in the trials table, exactly as written
        assert payload in text, payload
    assert EVIL_SCORER in text and EVIL_SCORER_2 in text
    assert "49" not in text.split("{{ 7*7 }}")[0][-5:]  # the template did not evaluate data


def test_the_content_security_policy_blocks_everything(own_page: Loaded) -> None:
    csp = own_page.js(
        "document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content"
    )
    assert csp.replace(" ", "").startswith("default-src'none'"), csp
    # script-src allows one script: the template's own, by the hash of its text
    script = own_page.js("document.querySelector('script').textContent")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    assert csp.endswith(f"script-src 'sha256-{digest}'"), csp
    assert "unsafe" not in csp.split("script-src")[1] and "unsafe-eval" not in csp
    before = len(own_page.requests)
    # Injected from outside (the DevTools protocol is not subject to the CSP): a script
    # element, an inline handler, an image from the network. The page's CSP must block all.
    own_page.js(
        "() => {"
        " const s = document.createElement('script');"
        " s.textContent = 'window.injected = 1';"
        " document.body.appendChild(s);"
        " const b = document.createElement('button');"
        " b.setAttribute('onclick', 'window.injected = 2');"
        " document.body.appendChild(b); b.click();"
        " const i = document.createElement('img');"
        " i.src = 'http://127.0.0.1:9/img.png';"
        " document.body.appendChild(i);"
        "}"
    )
    # the three blocked attempts are reported as violations: wait for them, not a clock
    own_page.page.wait_for_function("window.__violations.length >= 3")
    assert own_page.js("typeof window.injected") == "undefined"
    # the image request was stopped by the CSP before it reached the network
    image = "http://127.0.0.1:9/img.png"
    assert wait_for(
        lambda: own_page.js("1") and image in own_page.failed, timeout=30
    )  # events pumped
    assert own_page.requests[before:] == [image]
    assert "csp" in own_page.failed[image].lower(), own_page.failed
    violations = own_page.js("window.__violations")
    assert any(v.startswith("script-src") for v in violations), violations
    assert any(v.startswith("img-src") for v in violations), violations


def test_ci_installs_chromium_and_playwright() -> None:
    """Without them this file skips; CI must not skip it silently."""
    repo = Path(__file__).resolve().parents[2]
    ci = (repo / ".ci" / "run").read_text()
    assert "apt-get install -y chromium" in ci
    assert ci.index("apt-get install") < ci.index('pip install -e ".[test]"')
    extras = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    assert any(dep.startswith("playwright") for dep in extras["optional-dependencies"]["test"])
