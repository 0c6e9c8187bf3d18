"""The sandbox runs real programs in real subprocesses and holds them to their limits."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from assay.score import SandboxLimits, SandboxResult, run_python
from tests.helpers import process_gone, process_group_gone

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def run(code: str, **limits: object) -> SandboxResult:
    settings = SandboxLimits(**{"timeout": 5.0, **limits})  # type: ignore[arg-type]
    return anyio.run(run_python, code, settings)


def test_a_program_that_ends_well_passes_and_its_output_is_kept() -> None:
    result = run("print('hello from the sandbox')")
    assert result.passed and result.finished and result.exit_code == 0
    assert result.stdout == "hello from the sandbox\n"
    assert result.summary() == "passed"


def test_a_failing_assertion_fails_with_its_traceback() -> None:
    result = run("print('checking')\nassert 1 + 1 == 3, 'arithmetic is broken'")
    assert not result.passed and result.exit_code == 1
    assert 'File "main.py", line 2' in result.stderr
    assert "AssertionError: arithmetic is broken" in result.stderr
    assert "_sandbox_child" not in result.stderr  # the harness's own frame is left out
    assert result.stdout == "checking\n"


@pytest.mark.parametrize("leave", ["import sys; sys.exit(0)", "import os; os._exit(0)"])
def test_leaving_early_with_status_0_is_not_a_pass(leave: str) -> None:
    result = run(f"{leave}\nassert False, 'the tests never ran'")
    assert result.exit_code == 0 and not result.finished and not result.passed
    assert "before the end of the program" in result.summary()


def test_an_infinite_loop_times_out_and_its_group_is_killed() -> None:
    result = run("import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass", timeout=1.0)
    assert result.timed_out and not result.passed
    assert result.signal == "SIGKILL"
    assert process_gone(int(result.stdout.split()[0]))
    assert process_group_gone(int(result.stdout.split()[0]))  # it led its own group
    assert "timed out" in result.summary()


def test_the_cpu_limit_stops_a_busy_loop_before_the_wall_clock() -> None:
    result = run("while True:\n    pass", timeout=60.0, cpu_seconds=1)
    assert not result.timed_out and result.signal in ("SIGXCPU", "SIGKILL")


def test_a_huge_allocation_hits_the_memory_limit() -> None:
    result = run("block = bytearray(8 * 1024**3)", memory_bytes=256 << 20)
    assert not result.passed and "MemoryError" in result.stderr


def test_a_big_file_hits_the_file_size_limit(tmp_path: Path) -> None:
    target = tmp_path / "big.bin"
    code = f"open({str(target)!r}, 'wb').write(b'x' * (8 << 20))"
    result = run(code, file_bytes=1 << 20)
    assert not result.passed and "File too large" in result.stderr
    assert target.stat().st_size <= 1 << 20


@pytest.mark.parametrize(
    "code",
    [
        "import os\nwhile True:\n    os.fork()",
        "import subprocess\nsubprocess.run(['sleep', '30'])",
        "import os\nos.system('sleep 30')",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
    ],
)
def test_starting_processes_is_refused(code: str) -> None:
    result = run(code)
    assert not result.passed and "does not allow starting processes" in result.stderr
    assert not result.timed_out  # refused at once, not left to sleep out its 5 s


def test_processes_can_be_allowed() -> None:
    code = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(7)'], check=True)"
    assert run(code, processes=True).passed


def test_processes_that_get_around_the_guard_are_killed_with_the_group(tmp_path: Path) -> None:
    # ctypes calls fork(2) itself, past the Python-level guard (and root ignores
    # RLIMIT_NPROC); the children sleep, and the group kill at the end must stop them.
    code = (
        "import ctypes, os, time\n"
        "libc = ctypes.CDLL(None)\n"
        "for i in range(3):\n"
        "    if libc.fork() == 0:\n"
        f"        path = os.path.join({str(tmp_path)!r}, f'child{{i}}')\n"
        "        open(path, 'w').write(str(os.getpid()))\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        f"while len(os.listdir({str(tmp_path)!r})) < 3:\n"
        "    time.sleep(0.01)\n"
        "print(os.getpgid(0))\n"
    )
    result = run(code)
    assert result.passed, result.stderr
    children = [int(p.read_text()) for p in sorted(tmp_path.iterdir())]
    assert len(children) == 3
    assert all(process_gone(pid) for pid in children)
    assert process_group_gone(int(result.stdout))


def test_a_daemon_that_left_the_group_is_killed_too(tmp_path: Path) -> None:
    # setsid() puts the child out of reach of the group kill, holding stdout open
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    open(os.path.join({str(tmp_path)!r}, 'daemon'), 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        f"while not os.listdir({str(tmp_path)!r}):\n"
        "    time.sleep(0.01)\n"
        "print('done')\n"
    )
    result = run(code, processes=True)
    assert result.passed and result.stdout == "done\n", result.stderr
    assert process_gone(int((tmp_path / "daemon").read_text()), limit=2.0)


def test_output_is_capped_keeping_its_start_and_end() -> None:
    code = "print('START')\nprint('x' * 1_000_000)\nprint('END')"
    result = run(code, output_bytes=1000)
    assert result.stdout.startswith("START")
    assert result.stdout.rstrip().endswith("END")
    assert "bytes cut" in result.stdout and len(result.stdout) < 1100


def test_the_environment_is_clean_and_the_folder_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-never-shared")
    code = "import os\nprint(sorted(os.environ))\nprint(os.getcwd())\nprint(os.listdir('.'))"
    result = run(code)
    assert "OPENAI_API_KEY" not in result.stdout and "sk-secret" not in result.stdout
    _, folder, files = result.stdout.splitlines()
    assert files == "['main.py']"
    assert not Path(folder).exists()  # removed afterwards


def test_the_event_loop_keeps_running_while_a_program_runs(tmp_path: Path) -> None:
    """The program waits for a file that only a task of the same event loop writes once
    the program has started: a loop blocked by ``run_python`` never writes it, and the
    program times out instead of passing."""
    started, answered = tmp_path / "started", tmp_path / "answered"
    code = (
        "import os, time\n"
        f"open({str(started)!r}, 'w').close()\n"
        f"while not os.path.exists({str(answered)!r}):\n"
        "    time.sleep(0.01)\n"
    )

    async def main() -> SandboxResult:
        async def answer() -> None:
            while not started.exists():
                await anyio.sleep(0.01)
            answered.touch()

        async with anyio.create_task_group() as group:
            group.start_soon(answer)
            result = await run_python(code, SandboxLimits(timeout=60.0))
        return result

    result = anyio.run(main)
    assert result.passed and not result.timed_out, result.summary()


def test_a_cancelled_run_leaves_nothing_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    slept = tmp_path / "slept"  # written only if the program's sleep ran to its end
    code = (
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        f"time.sleep(60)\nopen({str(slept)!r}, 'w').close()"
    )

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(run_python, code, SandboxLimits(timeout=120.0))
            while not pid_file.exists():  # cancelled once the program is surely running
                await anyio.sleep(0.01)
            group.cancel_scope.cancel()

    anyio.run(main)
    assert not slept.exists(), "the cancelled run waited for its program"
    assert process_gone(int(pid_file.read_text()))


def test_a_missing_interpreter_is_an_error_not_a_result() -> None:
    with pytest.raises(OSError):
        anyio.run(lambda: run_python("print(1)", python="/nonexistent/python"))
