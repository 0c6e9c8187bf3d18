"""The forge suite: model answers that try to make ``python_tests`` (and ``run_python``
with ``tests=``, in a scorer of the same run) say "passed" without passing the tests, or
to break the harness, each a real program in a real run.

Every attack answers the same problem (``add``) wrongly or not at all, then tries to
get a pass some other way: reading the verdict's secrets out of frames, leaving early
with status 0, writing a forged verdict to every file descriptor it has, patching the
builtins, ``assert`` or ``unittest``, returning an object equal to everything, killing
or stopping every process it can see, reading the harness's keys, fork bombs, 3,000
nested folders, filling the disk, an endless loop, a flood of output, garbage on the
pipe. Each must score ``failed`` with both scorers; the run must finish with every
sample scored and the honest answer passing, and no key may reach the run's files.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

import assay
from tests.helpers import events_of, read_jsonl, run_cli

# the checks go through builtins, so an attack that could shadow them would pass
TESTS = (
    "assert abs(add(2, 3) - 5) < 1e-9\n"
    "assert abs(add(-1, 1)) < 1e-9\n"
    "assert len(str(add(10, 20))) == 2\n"
)

# python_tests, and a scorer of the task's own on run_python(program, tests=...)
SCORERS = ("python_tests", "run_python_tests")

HONEST = "def add(a, b):\n    return a + b\n"

# Run unsandboxed (as root, by a broken or an old python_tests) these programs would
# kill or stop every process on the machine and fill its disk: each refuses to go on
# outside the sandbox's uid. ``read_the_keys`` has no guard and prints the uid it ran as,
# which a test checks, so a broken sandbox still fails the suite.
SANDBOX_UID = 65534
GUARD = f"""import os
if os.getuid() != {SANDBOX_UID}:
    raise SystemExit("not in the sandbox: this attack is not run")
"""

ATTACKS = {
    # the exploit of issue 14: the runner's token taken from a frame, then os._exit(0)
    "frame_inspection": """
import os, sys
def add(a, b):
    return None
found = []
frame = sys._getframe()
while frame is not None:
    for scope in (frame.f_locals, frame.f_globals):
        for value in list(scope.values()):
            if isinstance(value, (str, bytes)) and 8 <= len(value) <= 128:
                found.append(value if isinstance(value, bytes) else value.encode())
    frame = frame.f_back
for fd in range(256):
    for value in found:
        try:
            os.write(fd, value + b"\\n")
        except OSError:
            pass
os._exit(0)
""",
    "os_exit_0": "import os\nos._exit(0)\ndef add(a, b):\n    return a - b\n",
    "sys_exit_0": "import sys\nsys.exit(0)\ndef add(a, b):\n    return a - b\n",
    "exit_0_inside_the_call": "def add(a, b):\n    import os\n    os._exit(0)\n",
    "system_exit_from_the_call": "def add(a, b):\n    raise SystemExit(0)\n",
    # a forged verdict on every descriptor it inherited, in every format it could guess
    "forged_verdict_on_every_fd": """
import os
lines = [b'{"passed": true, "summary": "passed", "calls": 3}\\n', b'passed\\n', b'0\\n']
for fd in range(256):
    for line in lines:
        try:
            os.write(fd, line)
        except OSError:
            pass
def add(a, b):
    return 0
""",
    "garbage_on_the_pipe": """
import os
for fd in range(3, 256):
    try:
        os.write(fd, b'{"id": 99, "value": 5}\\n{not json\\n' + b'[' * 100000 + b'\\n')
    except OSError:
        pass
def add(a, b):
    return 0
""",
    "patched_builtins_and_assert": """
import builtins, sys
class Yes:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
builtins.AssertionError = type("Quiet", (Exception,), {})
builtins.abs = lambda x: 0
builtins.isinstance = lambda *args: True
sys.excepthook = lambda *args: None
import unittest
unittest.TestCase.assertEqual = lambda *args, **kwargs: None
unittest.TestCase.assertTrue = lambda *args, **kwargs: None
def add(a, b):
    return Yes()
""",
    "shadowed_builtins": """
def abs(x):
    return 0
def str(x):
    return "ab"
def len(x):
    return 2
def add(a, b):
    return a - b
""",
    "an_int_equal_to_everything": """
class Yes(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def add(a, b):
    return Yes(0)
""",
    "kill_every_process_it_sees": """
import os, signal
for pid in [os.getppid(), 1, *range(2, 1 << 16)]:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
def add(a, b):
    return None
""",
    "stop_every_process_it_sees": """
import os, signal
for pid in [os.getppid(), 1, *range(2, 1 << 16)]:
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        pass
try:
    os.kill(-1, signal.SIGSTOP)
except OSError:
    pass
def add(a, b):
    return None
""",
    "read_the_keys": """
import os
print(f"uid={os.getuid()}")
seen = dict(os.environ)
for entry in os.listdir("/proc"):
    for name in ("environ", "cmdline"):
        try:
            seen[entry + "/" + name] = open(f"/proc/{entry}/{name}", "rb").read().decode(
                errors="replace"
            )
        except OSError:
            pass
print(seen)
import sys
print(seen, file=sys.stderr)
def add(a, b):
    return str(seen)
""",
    "fork_bomb": """
import os
while True:
    os.fork()
""",
    "fork_bomb_through_ctypes": """
import ctypes
libc = ctypes.CDLL(None)
forks = sum(1 for _ in range(1000) if libc.fork() > 0)
def add(a, b):
    return forks
""",
    "thread_bomb": """
import threading, time
for _ in range(1000):
    threading.Thread(target=time.sleep, args=(60,)).start()
def add(a, b):
    return None
""",
    "deep_folders": """
import os
for root in (".", "/tmp", "/dev/shm"):
    made = 0
    try:
        os.chdir(root)
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
            made += 1
    except OSError as exc:
        print(f"{root}: {made} levels, then {exc.strerror}")
def add(a, b):
    return 1 / 0
""",
    "fill_the_disk": """
import os
block = b"x" * (1 << 20)
for root in (".", "/tmp", "/dev/shm", "/dev"):
    written = 0
    try:
        for n in range(10000):
            with open(os.path.join(root, f"fill{n}"), "wb") as handle:
                for _ in range(16):
                    handle.write(block)
                    written += 1
    except OSError as exc:
        print(f"{root}: {written} MB, then {exc.strerror}")
def add(a, b):
    return None
""",
    "endless_loop": "while True:\n    pass\n",
    "endless_loop_in_the_call": "def add(a, b):\n    while True:\n        pass\n",
    "flood_of_output": """
import sys
chunk = "y" * (1 << 20)
for _ in range(64):
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
def add(a, b):
    print(chunk * 8)
    return None
""",
    "huge_answer": "def add(a, b):\n    return 'z' * (64 << 20)\n",
}

TASK = """
import json
from pathlib import Path

from assay import CORRECT, INCORRECT, Sample, Score, Task, accuracy, python_tests, scorer
from assay import solver, task
from assay.model import ModelOutput
from assay.score import SandboxLimits, run_python

ATTACKS = json.loads(Path(__file__).with_name("attacks.json").read_text())


@solver
def answer_with_the_input():
    async def solve(state, generate):
        state.output = ModelOutput.from_content(state.model, state.input_text)
        return state

    return solve


@scorer(metrics=[accuracy()])
def run_python_tests():
    # the same check as python_tests, as a scorer of one's own on run_python

    async def score(state, target):
        limits = SandboxLimits(timeout=3.0, memory_bytes=512 << 20)
        result = await run_python(state.output.completion, limits, tests=target.text)
        said = [result.summary(), result.tests_output, result.stderr, result.stdout]
        return Score(value=CORRECT if result.passed else INCORRECT, explanation="\\n".join(said))

    return score


@task
def forge():
    samples = [Sample(id=name, input=code, target=ATTACKS["tests"]) for name, code in
               ATTACKS["programs"].items()]
    return Task(
        dataset=samples,
        solver=answer_with_the_input(),
        scorer=[python_tests(timeout=3.0, memory_mb=512), run_python_tests()],
    )
"""


@pytest.fixture(scope="module")
def forged_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real ``assay run`` (a subprocess, so an attack that reached the harness would
    kill it, not the test) with every attack and the honest answer as samples."""
    folder = tmp_path_factory.mktemp("forge")
    programs = {"honest": HONEST}
    for name, code in ATTACKS.items():
        programs[name] = code if name == "read_the_keys" else GUARD + code
    (folder / "attacks.json").write_text(json.dumps({"tests": TESTS, "programs": programs}))
    (folder / "forge_task.py").write_text(TASK)
    key = f"sk-forge-{secrets.token_hex(12)}"
    source = str(Path(assay.__file__).resolve().parents[1])  # the assay under test, no other
    done = run_cli(
        "run", "forge_task.py@forge", "--model", "mock/x", cwd=folder,
        env={"OPENAI_API_KEY": key, "PYTHONPATH": source}, timeout=600,
    )  # fmt: skip
    [run_dir] = (folder / "runs").iterdir()
    scores = {(r["scorer_id"], r["sample_id"]): r for r in read_jsonl(run_dir / "scores.jsonl")}
    return {"done": done, "run": run_dir, "scores": scores, "key": key}


def test_the_run_finishes_and_scores_every_sample(forged_run: dict[str, Any]) -> None:
    done = forged_run["done"]
    assert done.returncode == 0, done.stderr  # ungated: exit 0 (docs/cli.md)
    samples = {"honest", *ATTACKS}
    assert set(forged_run["scores"]) == {(s, sample) for s in SCORERS for sample in samples}
    for name in SCORERS:
        assert forged_run["scores"][name, "honest"]["status"] == "passed"


@pytest.mark.parametrize("scorer", SCORERS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_scores_failed(forged_run: dict[str, Any], attack: str, scorer: str) -> None:
    record = forged_run["scores"][scorer, attack]
    assert record["status"] == "failed", record
    assert len(record["reason"] or "") < 200_000  # capped, however much was printed


@pytest.mark.parametrize("scorer", SCORERS)
def test_the_candidate_ran_in_the_sandbox(forged_run: dict[str, Any], scorer: str) -> None:
    reason = forged_run["scores"][scorer, "read_the_keys"]["reason"]
    assert f"uid={SANDBOX_UID}" in reason  # so the guarded attacks did run


@pytest.mark.parametrize("scorer", SCORERS)
def test_no_key_reaches_the_run_folder(forged_run: dict[str, Any], scorer: str) -> None:
    key = forged_run["key"].encode()
    reason = forged_run["scores"][scorer, "read_the_keys"]["reason"]
    assert "'PATH'" in reason  # what it found was printed, into the score's reason
    for path in forged_run["run"].rglob("*"):
        if path.is_file():
            assert key not in path.read_bytes(), path
    assert key not in (forged_run["done"].stdout + forged_run["done"].stderr).encode()


@pytest.mark.parametrize("scorer", SCORERS)
@pytest.mark.parametrize("attack", ["deep_folders", "fill_the_disk"])
def test_every_write_fails_at_once(forged_run: dict[str, Any], attack: str, scorer: str) -> None:
    reason = forged_run["scores"][scorer, attack]["reason"]
    for root in (".", "/tmp", "/dev/shm"):
        assert f"{root}: 0 " in reason and "Read-only file system" in reason, reason


def test_rescoring_the_forged_run_replays_it_and_agrees(forged_run: dict[str, Any]) -> None:
    source = str(Path(assay.__file__).resolve().parents[1])
    run_dir = forged_run["run"]
    rescored = run_cli("score", run_dir, env={"PYTHONPATH": source}, timeout=300)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr  # scores equal
    assert "timed out" not in rescored.stdout  # nothing ran: no attack's timeout again
    replayed = {e["data"]["scorer"] for e in events_of(run_dir, "score_exec")}
    assert replayed == {"python_tests", "run_python"}  # both were recorded, to replay
