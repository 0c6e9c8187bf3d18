"""Whether the environment sends a server through a proxy, read without urllib.request
when no ``*_proxy`` variable is set (importing it cost a run's start 7 ms), and the
same answer as urllib's whatever is set."""

from __future__ import annotations

import os
import urllib.request

import pytest

from assay.model._openai_http import proxy_for
from tests.helpers import run_python

URL = "http://10.1.2.3:8000/v1"


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


def _urllib(url: str) -> str | None:
    proxies = urllib.request.getproxies()
    proxy = proxies.get("http") or proxies.get("all")
    return None if not proxy or urllib.request.proxy_bypass("10.1.2.3:8000") else proxy


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
    ],
)
def test_the_proxy_is_the_one_urllib_names(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    _clear(monkeypatch)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert proxy_for(URL) == _urllib(URL)


def test_without_a_proxy_variable_urllib_request_is_not_imported() -> None:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    code = (
        "import sys\n"
        "from assay.model import get_model\n"
        "get_model('openai/tiny', base_url='http://127.0.0.1:9/v1', api_key='sk-x')\n"
        "print('urllib.request' in sys.modules)\n"
    )
    done = run_python(code, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
