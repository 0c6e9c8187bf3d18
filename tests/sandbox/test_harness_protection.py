"""The harness protects itself from code in its sandboxes (issue 14, item 7).

The harness here is a real separate process, started with a fake API key in its initial
environment (what ``/proc/PID/environ`` shows), that creates a bwrap sandbox and runs
``HARNESS_ATTACK`` in it with the harness's real pid and a run directory's real path:
read every environment and command line in sight, SIGSTOP and SIGKILL every pid in
sight, the harness's and -1 (everything), and find, list and write the run directory.
A SIGSTOP that reached the harness would hang it (the subprocess timeout fails the test).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.sandbox._support import HARNESS_ATTACK, check_attack_report

HARNESS = """
import json, os, sys
import anyio, msgspec
from assay.sandbox import BwrapSandbox

async def main():
    async with BwrapSandbox() as sandbox:
        attack = ["python3", "-c", sys.argv[1], str(os.getpid()), sys.argv[2]]
        result = await sandbox.exec(attack, timeout=120)
        folder = sandbox.folder
    print(json.dumps({"result": msgspec.to_builtins(result), "folder": folder,
                      "pid": os.getpid()}))

anyio.run(main)
"""


def test_code_in_a_bwrap_sandbox_cannot_read_signal_or_find_the_harness(tmp_path: Path) -> None:
    secret = "sk-fake-" + secrets.token_hex(16)
    run_dir = tmp_path / f"run-{secrets.token_hex(4)}"
    run_dir.mkdir()
    (run_dir / "spec.json").write_text("{}")
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, HARNESS_ATTACK, str(run_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": secret},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr  # neither killed nor stopped: it finished
    harness = json.loads(proc.stdout)
    result = harness["result"]
    assert result["returncode"] == 0, result["stderr"]
    report = json.loads(result["stdout"])
    check_attack_report(report, harness["pid"], secret)
    assert harness["folder"] not in result["stdout"]  # the work folder's host path
    assert sorted(p.name for p in run_dir.iterdir()) == ["spec.json"]
