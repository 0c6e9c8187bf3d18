"""Whether the environment sends a server through a proxy, read without urllib.request
on Linux (importing it cost a run's start 6-7 ms), and the same answer as urllib's
whatever is set."""

from __future__ import annotations

import os
import sys
import urllib.parse
import urllib.request

import pytest

from assay.model._proxy import proxy_for
from tests.helpers import run_python

URL = "http://10.1.2.3:8000/v1"
URLS = (
    URL,
    "https://api.example.com/v1",
    "http://user:pw@Host.Example.COM:8080/v1",
    "http://localhost/v1",
    "http://[::1]:8000/v1",
)
DEAD = "http://127.0.0.1:9"
BENCH = {  # bench/_common.py's inspect_env
    **{name: DEAD for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy")},
    "https_proxy": DEAD,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


def _urllib(url: str) -> str | None:
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    bypass = urllib.request.proxy_bypass(parts.netloc.rpartition("@")[2])
    return None if not proxy or bypass else proxy


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"HTTP_PROXY": ""},  # empty: no proxy
        {"Http_Proxy": "http://127.0.0.1:9"},
        {"all_proxy": "http://127.0.0.1:9"},
        {"https_proxy": "http://127.0.0.1:9"},  # not for an http:// server
        {"http_proxy": "http://127.0.0.1:9", "no_proxy": "10.1.2.3"},
        {"no_proxy": "*"},
        BENCH,
        {"HTTP_PROXY": DEAD, "REQUEST_METHOD": "GET"},  # CGI: HTTP_PROXY not trusted
        {"http_proxy": DEAD, "REQUEST_METHOD": "GET"},
        {"HTTP_PROXY": DEAD, "http_proxy": ""},  # the empty lowercase one wins
        {"ALL_PROXY": DEAD, "NO_PROXY": " .example.com , localhost"},
        {"ALL_PROXY": DEAD, "no_proxy": "host.example.com:8080,::1"},
        {"ALL_PROXY": DEAD, "no_proxy": "10.1.2.3:8000,[::1]:8000"},
        {"ALL_PROXY": DEAD, "no_proxy": "ample.com,.,,:8000"},
        {"HTTPS_PROXY": DEAD, "no_proxy": "API.EXAMPLE.COM"},
    ],
)
def test_the_proxy_is_the_one_urllib_names(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    _clear(monkeypatch)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for url in URLS:
        assert proxy_for(url) == _urllib(url), url


def _urllib_request_loaded(proxies: dict[str, str]) -> bool:
    """Whether a fresh process with only *proxies* among its ``*_proxy`` variables
    imports urllib.request to make an openai model."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    code = (
        "import sys\n"
        "from assay.model import get_model\n"
        "get_model('openai/tiny', base_url='http://127.0.0.1:9/v1', api_key='sk-x')\n"
        "print('urllib.request' in sys.modules)\n"
    )
    done = run_python(code, env={**env, **proxies})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip() == "True"


def test_without_a_proxy_variable_urllib_request_is_not_imported() -> None:
    assert not _urllib_request_loaded({})


@pytest.mark.not_for_ci("on macOS and Windows urllib asks the system's settings")
@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="urllib asks the system there")
def test_with_proxy_variables_urllib_request_is_not_imported_either() -> None:
    assert not _urllib_request_loaded(BENCH)
