"""Subprocess targets cannot leave processes behind: the whole process group goes.

The program under test starts a child that would sleep for a minute, writes its process
group id to a file, and then either answers at once or hangs past its timeout. Either
way, once the run is over, nothing in that group may be alive.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import (
    bundles_by_sample,
    process_group_gone,
    run_spec_at,
    simple_spec,
    write_module,
)

PROGRAM = """
import json
import os
import subprocess
import sys
import time

sample = json.load(sys.stdin)
slept = os.path.join(os.path.dirname(sys.argv[1]), "child-slept")  # if it sleeps it out
child = subprocess.Popen(
    [sys.executable, "-c", "import sys, time; time.sleep(60); open(sys.argv[1], 'w')", slept]
)
with open(sys.argv[1], "a") as handle:
    handle.write(f"{os.getpgid(0)} {child.pid}\\n")
if sample["input"] == "hang":
    time.sleep(60)
print(json.dumps(sample["input"]))
"""


# The timeout leaves a loaded machine time to start Python and write the pids (0.5 s did
# not always); the answering program ends at once, so its timeout costs nothing.
@pytest.mark.parametrize(
    ("sample_input", "state", "timeout"), [("answer", "completed", 30.0), ("hang", "blocked", 2.0)]
)
@pytest.mark.doc(
    "docs/spec.md",
    "It runs in its own process group, killed on timeout",
)
def test_the_whole_process_group_is_gone_afterwards(
    tmp_path: Path, sample_input: str, state: str, timeout: float
) -> None:
    folder = tmp_path / "spec"
    write_module(folder, "program", PROGRAM)
    pids = tmp_path / "pids.txt"
    targets = [{"id": "t", "script": "program.py", "args": [str(pids)], "timeout": timeout}]
    samples = [{"id": "s0", "input": sample_input, "expected": sample_input}]
    retry = {"max_attempts": 1, "initial_backoff": 0.01, "max_backoff": 0.02}
    spec = simple_spec(folder, samples=samples, targets=targets, retry=retry)
    run_spec_at(spec, tmp_path / "run")
    (line,) = pids.read_text().splitlines()
    pgid, child = map(int, line.split())
    # answered: the child would hold stdout open for 60 s if it were not killed, so the
    # run returning while it sleeps on means the run did not wait for it
    assert not (tmp_path / "child-slept").exists(), "the run waited for the child's sleep"
    assert bundles_by_sample(tmp_path / "run")["s0"]["state"] == state
    assert pgid not in (os.getpgid(0), os.getpid())  # it ran in its own group
    assert process_group_gone(pgid), f"process group {pgid} (child {child}) is still alive"
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)
