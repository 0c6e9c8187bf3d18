"""A real viewer on 127.0.0.1 (any free port) in a thread of the test process, and the
runs the viewer tests look at, made with the real CLI."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.helpers import SHIPPING, read_jsonl, run_cli, wait_for, write_dataset, write_spec

CHECKING = "Verifying this run in the background"


@contextmanager
def served(root: Path, **options: Any) -> Iterator[httpx.Client]:
    """The viewer over *root*, served by aiohttp on 127.0.0.1 port 0 until the block
    ends (*options*: ``build_app``'s); yields an httpx client whose base URL is the
    server's. The server's event loop
    lives wholly in its own thread (Playwright's sync API runs a loop in this one)."""
    from aiohttp import web

    from assay.view import build_app

    loop = asyncio.new_event_loop()
    runner = web.AppRunner(build_app(root, **options), access_log=None)
    bound: queue.Queue[int | BaseException] = queue.Queue()

    async def start() -> None:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
            bound.put(runner.addresses[0][1])
        except BaseException as exc:
            bound.put(exc)
            return
        loop.run_forever()

    thread = threading.Thread(target=serve, name="view-server", daemon=True)
    thread.start()
    port = bound.get(timeout=60)
    try:
        if isinstance(port, BaseException):
            raise port
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        if loop.is_running():
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=60)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=60)
        loop.close()


def verified_page(client: httpx.Client, url: str) -> httpx.Response:
    """*url* (a page showing a run's verdict) once the background check has one. A page
    waits a few seconds for it, then says the check is still going; a loaded machine
    can take longer than that to start the checking process, so the test asks again."""
    pages: list[httpx.Response] = []

    def settled() -> bool:
        pages.append(client.get(url))
        return CHECKING not in pages[-1].text

    assert wait_for(settled, 120, step=0.05), pages[-1].text
    return pages[-1]


def shipping_run(runs: Path, name: str = "shipping") -> Path:
    """The shipping example, run with the CLI into *runs*/*name* (its gate fails: exit 1)."""
    proc = run_cli("run", SHIPPING / "eval.yaml", "-o", runs / name)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return runs / name


def plan(run: Path) -> list[dict[str, Any]]:
    """The run's planned trials, in plan order."""
    return read_jsonl(run / "plan.jsonl")


WORDS_TARGET = """
def answer(text):
    n = int(text.split()[-1])
    if n % 7 == 0:
        raise ValueError(f"no answer for {n}")
    return text if n % 3 else f"wrong {n}"
"""


def many_trials_run(folder: Path, runs: Path, count: int = 120) -> Path:
    """*count* samples on one callable target: every 3rd answer wrong, every 7th raises
    (a failed score whose reason is the error), so filters, paging and search find something."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "words.py").write_text(WORDS_TARGET, encoding="utf-8")
    samples = [
        {"id": f"s{i:03d}", "input": f"question number {i}", "expected": f"question number {i}"}
        for i in range(count)
    ]
    write_dataset(folder, samples)
    spec = write_spec(
        folder,
        {
            "evaluation": "many",
            "dataset": "data.jsonl",
            "targets": [{"id": "words", "callable": "words:answer"}],
            "scorers": [{"id": "exact", "type": "exact"}],
        },
    )
    proc = run_cli("run", spec, "-o", runs / "many")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # nothing gated
    return runs / "many"
