"""Many bwrap sandboxes at once (issue 14, item 9): each created, used and cleaned up in
one anyio task group, and nothing of any of them left on the host afterwards."""

from __future__ import annotations

import os
import secrets
import shlex

import anyio

from assay.sandbox import BwrapSandbox, ExecResult
from tests.sandbox._support import host_processes_with, no_host_process_with, sleeper

CONCURRENT = 100


async def _one(index: int, marker: str, results: dict[int, tuple[ExecResult, str]]) -> None:
    """A sandbox whose command leaves a setsid daemon behind and answers its index."""
    daemon = shlex.join(["setsid", *sleeper(marker, "started")])
    script = f"{daemon} & while [ ! -e started ]; do sleep 0.01; done; echo {index}"
    async with BwrapSandbox() as sandbox:
        result = await sandbox.exec(["sh", "-c", script], timeout=240)
        results[index] = (result, sandbox.folder)


def test_a_hundred_concurrent_sandboxes_all_succeed_and_leave_nothing_behind() -> None:
    marker = f"assay-concurrent-{secrets.token_hex(6)}"
    results: dict[int, tuple[ExecResult, str]] = {}

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for index in range(CONCURRENT):
                group.start_soon(_one, index, marker, results)

    anyio.run(main)
    assert sorted(results) == list(range(CONCURRENT))
    for index, (result, _) in results.items():
        assert (result.returncode, result.stdout) == (0, f"{index}\n"), result.stderr
    folders = {folder for _, folder in results.values()}
    assert len(folders) == CONCURRENT  # one work folder each
    assert not [folder for folder in folders if os.path.exists(folder)]
    assert no_host_process_with(marker), host_processes_with(marker)
