"""The sandbox API on both providers: exec, input, output caps, timeouts, files."""

from __future__ import annotations

import os
import secrets
import shlex

import anyio
import pytest

from assay.sandbox import ExecResult
from tests.sandbox._support import PROVIDERS, new_sandbox, no_host_process_with, sleeper


@pytest.mark.parametrize("provider", PROVIDERS)
def test_exec_returns_stdout_stderr_and_the_exit_code(provider: str) -> None:
    async def main() -> ExecResult:
        async with new_sandbox(provider) as sandbox:
            return await sandbox.exec(["sh", "-c", "echo out; echo err >&2; exit 3"])

    result = anyio.run(main)
    assert result == ExecResult(False, 3, "out\n", "err\n")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_input_is_piped_as_text_or_bytes(provider: str) -> None:
    async def main() -> tuple[ExecResult, ExecResult]:
        async with new_sandbox(provider) as sandbox:
            text = await sandbox.exec(["cat"], input="hello\n")
            raw = await sandbox.exec(["od", "-An", "-tx1"], input=b"\x00\xff")
            return text, raw

    text, raw = anyio.run(main)
    assert (text.success, text.stdout) == (True, "hello\n")
    assert raw.stdout.split() == ["00", "ff"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_output_past_the_cap_is_cut_with_a_marker(provider: str) -> None:
    async def main() -> ExecResult:
        async with new_sandbox(provider, output_limit=1000) as sandbox:
            return await sandbox.exec(["python3", "-c", "print('x' * 1_000_000)"])

    result = anyio.run(main)
    assert result.success
    assert result.stdout.startswith("x" * 1000)
    assert result.stdout[1000:] == "\n[assay: output truncated at 1000 bytes]\n"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_kills_the_child_and_its_grandchild(provider: str) -> None:
    marker = f"assay-grandchild-{secrets.token_hex(6)}"
    grandchild = shlex.join(sleeper(marker, "started"))
    script = f"{grandchild} & while [ ! -e started ]; do sleep 0.01; done; sleep 100000"

    async def main() -> tuple[ExecResult, bool]:
        async with new_sandbox(provider) as sandbox:
            # 5 s: the grandchild (a Python) must start first, slow on a loaded machine
            result = await sandbox.exec(["sh", "-c", script], timeout=5)
            started = (await sandbox.exec(["ls"])).stdout.split()
            return result, "started" in started

    result, started = anyio.run(main)
    assert result.timed_out and not result.success and result.returncode == 128 + 9
    assert "timed out after 5 s" in result.stderr
    assert started, "the grandchild never ran, so its kill proves nothing"
    assert no_host_process_with(marker)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_setsid_daemon_does_not_survive_cleanup(provider: str) -> None:
    marker = f"assay-daemon-{secrets.token_hex(6)}"
    daemon = shlex.join(["setsid", *sleeper(marker, "started")])
    script = f"{daemon} & while [ ! -e started ]; do sleep 0.01; done; echo up"

    async def main() -> ExecResult:
        async with new_sandbox(provider) as sandbox:
            return await sandbox.exec(["sh", "-c", script], timeout=60)

    result = anyio.run(main)
    assert result.stdout == "up\n"
    assert no_host_process_with(marker)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_files_round_trip_as_text_and_bytes(provider: str) -> None:
    async def main() -> tuple[str, bytes, str]:
        async with new_sandbox(provider) as sandbox:
            await sandbox.write_file("notes/a.txt", "héllo\n")
            await sandbox.write_file("blob.bin", b"\x00\x01\xfe")
            inside = await sandbox.exec(["cat", "notes/a.txt"])
            await sandbox.exec(["sh", "-c", "printf made > made.txt"])
            return (
                inside.stdout,
                await sandbox.read_file("blob.bin", text=False),
                await sandbox.read_file("made.txt"),
            )

    assert anyio.run(main) == ("héllo\n", b"\x00\x01\xfe", "made")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_environment_holds_only_path_and_what_is_named(provider: str) -> None:
    async def main() -> ExecResult:
        async with new_sandbox(provider) as sandbox:
            return await sandbox.exec(["env"], env={"NAMED": "yes"})

    names = {line.split("=", 1)[0] for line in anyio.run(main).stdout.splitlines()}
    # local adds its reaping tag; bwrap sets PWD to the working folder it enters
    expected = {"PATH", "NAMED"} | ({"ASSAY_PROCESS_TAG"} if provider == "local" else {"PWD"})
    assert names == expected


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("signal_name", "number"), [("KILL", 9), ("TERM", 15)])
def test_a_command_killed_by_a_signal_returns_128_plus_the_signal(
    provider: str, signal_name: str, number: int
) -> None:
    """Before: bwrap said 137 for a SIGKILL inside, local said -9 (and a timeout -9 on both)."""

    async def main() -> ExecResult:
        async with new_sandbox(provider) as sandbox:
            return await sandbox.exec(["sh", "-c", f"echo before; kill -{signal_name} $$"])

    result = anyio.run(main)
    assert (result.returncode, result.stdout) == (128 + number, "before\n")
    assert not result.success and not result.timed_out


def test_local_runs_as_the_harness_s_user_and_takes_only_that_name() -> None:
    import pwd

    me = pwd.getpwuid(os.geteuid()).pw_name

    async def main() -> ExecResult:
        async with new_sandbox("local") as sandbox:
            with pytest.raises(ValueError, match="runs as the harness's user"):
                await sandbox.exec(["id", "-u"], user="someone-else")
            return await sandbox.exec(["id", "-u"], user=me)

    assert anyio.run(main).stdout == f"{os.geteuid()}\n"
