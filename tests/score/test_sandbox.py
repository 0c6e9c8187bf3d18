"""``run_python`` runs real programs in the sealed bubblewrap sandbox (the one
``python_tests`` uses), holds them to their limits and leaves nothing behind."""

from __future__ import annotations

import os
import secrets

import anyio
import pytest

from assay.score import SandboxLimits, SandboxResult, run_python
from tests.sandbox._support import host_processes_with, no_host_process_with

SANDBOX_UID = 65534


def run(code: str, tests: str = "", **limits: object) -> SandboxResult:
    # 60 s unless a test times a program out: a loaded machine may take seconds to start
    # the sandbox, and a program that ends does not wait for it
    settings = SandboxLimits(**{"timeout": 60.0, **limits})  # type: ignore[arg-type]
    return anyio.run(lambda: run_python(code, settings, tests=tests))


def test_a_program_that_ends_well_passes_and_its_output_is_kept() -> None:
    result = run("print('hello from the sandbox')")
    assert result.passed and result.finished and result.exit_code == 0
    assert result.stdout == "hello from the sandbox\n"
    assert result.summary() == "passed"


def test_the_program_runs_sealed_as_the_sandbox_user() -> None:
    code = (
        "import os\n"
        "print(os.getuid(), os.getcwd(), sorted(os.listdir('.')))\n"
        "for folder in ('.', '/tmp', '/dev/shm'):\n"
        "    try:\n"
        "        open(os.path.join(folder, 'x'), 'w')\n"
        "    except OSError as exc:\n"
        "        print(folder, exc.strerror)\n"
    )
    result = run(code)
    assert result.passed, result.summary()
    first, *writes = result.stdout.splitlines()
    assert first == f"{SANDBOX_UID} /work ['main.py']"
    assert writes == [f"{f} Read-only file system" for f in (".", "/tmp", "/dev/shm")]


def test_a_failing_assertion_fails_with_its_traceback() -> None:
    result = run("print('checking')\nassert 1 + 1 == 3, 'arithmetic is broken'")
    assert not result.passed and not result.finished
    assert 'File "main.py", line 2' in result.stderr
    assert "AssertionError: arithmetic is broken" in result.stderr
    assert "<string>" not in result.stderr  # the host's own frames are left out
    assert result.stdout == "checking\n"
    assert "raised AssertionError: arithmetic is broken" in result.summary()


@pytest.mark.parametrize("leave", ["import sys; sys.exit(0)", "import os; os._exit(0)"])
def test_leaving_early_with_status_0_is_not_a_pass(leave: str) -> None:
    result = run(f"{leave}\nassert False, 'the rest never ran'")
    assert result.exit_code == 0 and not result.finished and not result.passed
    assert result.summary().startswith("the candidate's program ")  # raised / ended


def test_tests_run_in_the_driver_against_the_program_s_functions() -> None:
    code = "def add(a, b):\n    return a + b\n"
    passing = run(code, tests="assert add(2, 3) == 5\nprint('checked')\n")
    assert passing.passed, passing.summary()
    assert passing.tests_output == "checked\n"
    failing = run(code, tests="assert add(2, 2) == 5, 'not five'\n")
    assert not failing.passed
    assert failing.summary() == "the tests failed: AssertionError: not five"
    assert 'File "tests.py", line 1' in failing.tests_output


@pytest.mark.parametrize(
    "leave", ["import os\nos._exit(0)\n", "import sys\nsys.exit(0)\n", "raise SystemExit(0)\n"]
)
def test_a_program_that_leaves_before_its_tests_fails_them(leave: str) -> None:
    # one program holding the code and then the tests could skip them this way; with
    # `tests=` the driver runs them, and a program that is gone cannot answer
    result = run(f"def add(a, b):\n    return 0\n{leave}", tests="assert add(2, 3) == 5\n")
    assert not result.passed and not result.finished


def sleeper(marker: str) -> str:
    """A program that becomes a sleeping ``python3 -c ... MARKER``: a host process the
    test can find by its command line."""
    argv = ["python3", "-c", "import time; time.sleep(600)", marker]
    return f"import os\nos.execv('/usr/bin/python3', {argv!r})\n"


def test_a_program_that_never_ends_times_out_and_nothing_is_left_running() -> None:
    marker = f"assay-loop-{secrets.token_hex(6)}"
    result = run(sleeper(marker), timeout=1.0)
    assert result.timed_out and not result.passed
    assert "timed out" in result.summary()
    assert no_host_process_with(marker)


def test_an_endless_loop_times_out() -> None:
    result = run("while True:\n    pass", timeout=1.0)
    assert result.timed_out and not result.passed


def test_the_cpu_limit_stops_a_busy_loop_before_the_wall_clock() -> None:
    result = run("while True:\n    pass", timeout=60.0, cpu_seconds=1)
    assert not result.timed_out and not result.passed
    assert result.exit_code in (128 + 9, 128 + 24)  # SIGKILL or SIGXCPU, inside


def test_a_huge_allocation_hits_the_memory_limit() -> None:
    result = run("block = bytearray(8 * 1024**3)", memory_bytes=256 << 20)
    assert not result.passed and "MemoryError" in result.stderr


@pytest.mark.parametrize(
    "code",
    [
        "import os\nif os.fork() == 0:\n    os._exit(0)",
        "import subprocess\nsubprocess.run(['true'], check=True)",
        "import os\nassert os.system('true') == 0",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
        "import threading\nthreading.Thread(target=print).start()",
    ],
)
def test_starting_processes_and_threads_is_refused(code: str) -> None:
    # a long timeout: a loaded machine may take seconds to start the sandbox, and the
    # refusal must come from the kernel's limit, not from the clock
    result = run(code, timeout=60.0)
    assert not result.passed, result.stderr
    assert not result.timed_out
    refusals = ("BlockingIOError", "can't start new thread", "assert os.system")
    assert any(refusal in result.stderr for refusal in refusals), result.stderr


def test_processes_can_be_allowed_and_die_with_the_sandbox() -> None:
    # a daemon that left the program's session would outlive a process-group kill; the
    # PID namespace takes it with the sandbox
    marker = f"assay-daemon-{secrets.token_hex(6)}"
    code = (
        "import os, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'print(7)'], check=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    {sleeper(marker).splitlines()[1]}\n"
        "def running(pid):\n"
        "    try:\n"
        "        with open(f'/proc/{pid}/cmdline', 'rb') as handle:\n"
        f"            return {marker.encode()!r} in handle.read()\n"
        "    except OSError:  # a process that has just ended\n"
        "        return False\n"
        "while not any(running(p) for p in os.listdir('/proc') if p.isdigit()):\n"
        "    pass  # the daemon is up (and stays up once this program ends)\n"
    )
    result = run(code, tests="", processes=True)
    assert result.passed, result.summary() + result.stderr
    assert result.stdout == "7\n"
    assert no_host_process_with(marker)


def test_output_is_capped_keeping_its_start_and_end() -> None:
    code = "print('START')\nprint('x' * 1_000_000)\nprint('END')"
    result = run(code, output_bytes=1000)
    assert result.stdout.startswith("START")
    assert result.stdout.rstrip().endswith("END")
    assert "bytes cut" in result.stdout and len(result.stdout) < 1100


def test_the_environment_is_empty_of_the_harness_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-never-shared")
    code = (
        "import os\nprint(sorted(os.environ))\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        print(open(f'/proc/{pid}/environ', 'rb').read())\n"
    )
    result = run(code)
    assert result.passed, result.summary()
    assert "OPENAI_API_KEY" not in result.stdout and "sk-secret" not in result.stdout


def test_the_event_loop_keeps_running_while_a_program_runs() -> None:
    """An endless program and a quick one start together; once the quick one is done
    the endless one is cancelled. A loop blocked by ``run_python`` would not run the
    quick one until the endless one timed out, and that one would return a result."""
    marker = f"assay-endless-{secrets.token_hex(6)}"
    endless_results: list[SandboxResult] = []
    quick_results: list[SandboxResult] = []

    async def main() -> None:
        async def endless() -> None:
            limits = SandboxLimits(timeout=60.0)
            endless_results.append(await run_python(sleeper(marker), limits))

        async with anyio.create_task_group() as group:
            group.start_soon(endless)
            quick_results.append(await run_python("print('quick')"))
            group.cancel_scope.cancel()

    anyio.run(main)
    assert quick_results[0].passed and quick_results[0].stdout == "quick\n"
    assert endless_results == [], "the endless program ran to its timeout first"
    assert no_host_process_with(marker)  # the cancelled run left nothing behind


def test_a_cancelled_run_leaves_nothing_behind() -> None:
    marker = f"assay-cancelled-{secrets.token_hex(6)}"

    async def main() -> list[SandboxResult]:
        finished: list[SandboxResult] = []

        async def runs() -> None:
            finished.append(await run_python(sleeper(marker), SandboxLimits(timeout=600.0)))

        async with anyio.create_task_group() as group:
            group.start_soon(runs)
            while not host_processes_with(marker) and not finished:
                await anyio.sleep(0.01)  # cancelled once the program surely runs
            group.cancel_scope.cancel()
        return finished

    assert anyio.run(main) == [], "the program ended by itself before it was cancelled"
    assert no_host_process_with(marker)


def test_an_unknown_sandbox_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"'bwrap' .* or 'local'"):
        anyio.run(lambda: run_python("print(1)", sandbox="docker"))


def test_the_local_provider_runs_both_processes_on_the_host_as_the_harness_s_user() -> None:
    code = "import os\nprint(os.getuid())\ndef add(a, b):\n    return a + b\n"
    result = anyio.run(
        lambda: run_python(code, SandboxLimits(timeout=60.0), tests="assert add(1, 2) == 3\n",
                           sandbox="local")
    )  # fmt: skip
    assert result.passed, result.summary()
    assert result.stdout == f"{os.geteuid()}\n"  # not the sandbox user: no isolation
