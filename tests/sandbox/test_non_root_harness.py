"""The harness run as an ordinary user (not root): bwrap sandboxes still start, isolate,
and score code in the sealed two-process path (issue 14).

The machine (and CI) runs as root, where the sandbox drops to host uid 65534 first; an
ordinary user's harness takes the other path (bwrap maps the sandbox user onto its own
uid, with no ``setpriv``). The real CLI runs here as uid 65534 (``setpriv``) with the
interpreter and the packages of this test run: they may sit under a folder that user
cannot enter (a pyenv under ``/root``, 0700), so the harness is started inside a mount
namespace (bubblewrap run by root, no user namespace: the process is really uid 65534)
where each such folder is an empty tmpfs holding read-only binds of only the paths
needed. Nothing is copied. A fake key is in the harness's environment; the sample's
sandbox runs ``HARNESS_ATTACK`` with the harness's real pid and the run's real folder.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import assay
from tests.helpers import read_jsonl
from tests.sandbox._support import HARNESS_ATTACK, check_attack_report

USER = 65534  # the harness's uid here (nobody)

TASK = """
import json, os, sys
from pathlib import Path

from assay import Sample, Task, python_tests, solver, task
from assay.model import ModelOutput
from assay.sandbox import sandbox

HERE = Path(__file__).parent
ATTACK = (HERE / "attack.py").read_text()
TESTS = "assert add(2, 3) == 5\\n"


@solver
def attack_then_answer():
    async def solve(state, generate):
        run_dir = os.environ["RUN_DIR"]
        result = await sandbox().exec(["python3", "-c", ATTACK, str(os.getpid()), run_dir])
        report = {"result": result.stdout, "stderr": result.stderr, "pid": os.getpid(),
                  "uid": os.getuid(), "folder": sandbox().folder}
        (HERE / f"report-{state.sample_id}.json").write_text(json.dumps(report))
        state.output = ModelOutput.from_content(state.model, state.input_text)
        return state

    return solve


@task
def non_root():
    samples = [
        Sample(id="honest", input="def add(a, b):\\n    return a + b\\n", target=TESTS),
        Sample(id="forger", input="import os\\nos._exit(0)\\n", target=TESTS),
    ]
    return Task(dataset=samples, solver=attack_then_answer(), scorer=python_tests(),
                sandbox="bwrap")
"""


def _reachable(path: str) -> bool:
    """Whether every folder on the way to *path* lets others through (o+x)."""
    current = os.path.abspath(path)
    while True:
        if not os.stat(current).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


def _first_closed(path: str) -> str | None:
    """The highest folder on the way to *path* that others cannot enter, if any."""
    parts = Path(os.path.abspath(path)).parts
    for depth in range(1, len(parts) + 1):
        folder = os.path.join(*parts[:depth])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def needed_paths() -> list[str]:
    """What the harness's interpreter reads: its executable's folder, its standard
    library, its packages, and the assay under test."""
    paths = {
        os.path.dirname(os.path.realpath(sys.executable)),
        sys.prefix,
        sys.base_prefix,
        str(Path(assay.__file__).resolve().parents[1]),
    }
    paths.update(entry for entry in sys.path if entry and os.path.isdir(entry))
    return sorted(os.path.realpath(p) for p in paths)


def launcher(work: Path) -> list[str]:
    """bwrap run by root: the host's whole tree, but each folder closed to others is an
    empty tmpfs with read-only binds of the needed paths inside; then ``setpriv``."""
    binds: dict[str, list[str]] = {}
    for path in needed_paths():
        closed = _first_closed(path)
        if closed is not None:
            binds.setdefault(closed, []).append(path)
    argv = ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--die-with-parent"]
    for closed, paths in binds.items():
        argv += ["--tmpfs", closed]
        for path in paths:
            argv += ["--ro-bind", path, path]
    ids = [f"--reuid={USER}", f"--regid={USER}", "--clear-groups"]
    return [*argv, "--chdir", str(work), "--", "/usr/bin/setpriv", *ids, "--"]


@pytest.fixture
def work_folder() -> Iterator[Path]:
    """A folder of the harness user's own under /tmp (tmp_path sits in a root-only one)."""
    folder = Path(tempfile.mkdtemp(prefix="assay-non-root-"))
    os.chown(folder, USER, USER)
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_non_root_harness_runs_isolated_sandboxes_and_scores_code(work_folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the harness already runs as an ordinary user: every sandbox test is this")
    for name, text in (("task.py", TASK), ("attack.py", HARNESS_ATTACK)):
        (work_folder / name).write_text(text)
    run_dir = work_folder / f"run-{secrets.token_hex(4)}"  # a name found nowhere else
    secret = "sk-fake-" + secrets.token_hex(16)
    source = str(Path(assay.__file__).resolve().parents[1])
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work_folder),
        "TMPDIR": str(work_folder),
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([source, *(p for p in sys.path if os.path.isdir(p))]),
        "OPENAI_API_KEY": secret,
        "RUN_DIR": str(run_dir),
    }
    command = [sys.executable, "-m", "assay", "run", "task.py", "--model", "mock/x"]
    done = subprocess.run(
        [*launcher(work_folder), *command, "-o", str(run_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # ungated: exit 0 (docs/cli.md)
    scores = {r["sample_id"]: r["status"] for r in read_jsonl(run_dir / "scores.jsonl")}
    assert scores == {"honest": "passed", "forger": "failed"}
    for sample in ("honest", "forger"):
        report = json.loads((work_folder / f"report-{sample}.json").read_text())
        assert report["uid"] == USER  # the harness was not root
        assert report["folder"] not in report["result"]
        check_attack_report(json.loads(report["result"]), report["pid"], secret)
    assert secret.encode() not in b"".join(
        p.read_bytes() for p in run_dir.rglob("*") if p.is_file()
    )
