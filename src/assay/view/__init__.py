"""``assay view``: a local web viewer over run folders (run list, run, samples, trials).

Read-only and local: it binds 127.0.0.1 unless told otherwise, reads each page's evidence
through the checked lookups (see ``assay.evidence``), and sends pages without any script
under a strict Content-Security-Policy. Built on aiohttp's server (the ``view`` extra,
also pulled in by the ``openai`` one), imported only when the viewer starts.
"""

from __future__ import annotations

import asyncio
import webbrowser
from collections.abc import Callable
from pathlib import Path

from assay.view._app import CSP, build_app

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7575

__all__ = ["CSP", "DEFAULT_HOST", "DEFAULT_PORT", "build_app", "serve"]


def serve(
    root: Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    open_browser: bool = True,
    started: Callable[[str], None] = print,
) -> None:
    """Serve the viewer over *root* until interrupted; *started* is told the URL once the
    socket is bound (port 0: any free port, so the URL is the only way to know it).
    Ctrl-C ends it as it ends any command: KeyboardInterrupt, exit 130."""
    asyncio.run(_serve(root, host, port, open_browser, started))


async def _serve(
    root: Path, host: str, port: int, open_browser: bool, started: Callable[[str], None]
) -> None:
    from aiohttp import web

    runner = web.AppRunner(build_app(root), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        url = f"http://{shown}:{bound_port}/"
        started(url)
        if open_browser:
            webbrowser.open(url)
        await asyncio.Event().wait()  # until Ctrl-C or SIGTERM ends the process
    finally:
        await runner.cleanup()
