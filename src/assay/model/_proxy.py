"""Which proxy the environment names for a URL, as ``urllib.request`` reads it.

On Linux urllib reads only the environment (``getproxies_environment`` and
``proxy_bypass_environment``); importing ``urllib.request`` to ask it brings in
``http.client`` and ``email`` (about 6 ms of CPU at a run's start, before the first
request). So here the same reading is done without it, and on macOS and Windows (where
urllib also asks the system's settings) urllib is asked. ``tests/model/
test_openai_proxy_env.py`` holds the answers to urllib's over a set of environments.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit


def proxy_for(url: str) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, ...)
    names for *url*, as the SDK's HTTP clients read it; None when there is none."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    if sys.platform in ("darwin", "win32"):
        import urllib.request

        proxies = urllib.request.getproxies()
        bypass = bool(urllib.request.proxy_bypass(host))
    else:
        proxies = environment_proxies()
        bypass = _bypassed(host, proxies)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    return None if not proxy or bypass else str(proxy)


def environment_proxies() -> dict[str, str]:
    """``urllib.request.getproxies_environment``: each ``<scheme>_proxy`` variable (any
    case; the lowercase one wins, an empty lowercase one removes it), ``HTTP_PROXY``
    ignored under CGI (``REQUEST_METHOD`` set: a client's ``Proxy:`` header)."""
    proxies: dict[str, str] = {}
    for name, value in os.environ.items():
        lower = name.lower()
        if value and lower.endswith("_proxy"):
            proxies[lower[:-6]] = value
    if "REQUEST_METHOD" in os.environ:
        proxies.pop("http", None)
    for name, value in os.environ.items():
        if name.endswith("_proxy"):
            if value:
                proxies[name.lower()[:-6]] = value
            else:
                proxies.pop(name.lower()[:-6], None)
    return proxies


def _bypassed(host: str, proxies: dict[str, str]) -> bool:
    """``urllib.request.proxy_bypass_environment``: *host* (``name[:port]``) matches
    ``no_proxy`` (``*``, or comma-separated names and domain suffixes)."""
    no_proxy = proxies.get("no")
    if no_proxy is None:
        return False
    if no_proxy == "*":
        return True
    host = host.lower()
    before, colon, port = host.rpartition(":")
    # urllib's _splitport: the name is what comes before a last colon and ASCII digits
    name_only = before if colon and all(c in "0123456789" for c in port) else host
    for entry in no_proxy.split(","):
        if not entry.strip():
            continue
        name = entry.strip().lstrip(".").lower()
        if name in (name_only, host):
            return True
        if name_only.endswith("." + name) or host.endswith("." + name):
            return True
    return False
