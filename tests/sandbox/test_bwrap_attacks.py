"""Attacks from inside a bwrap sandbox, each of which the local provider would let through."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from assay.errors import EXIT_CONFIG, ConfigError
from assay.sandbox import BwrapSandbox, ExecResult, Limits
from tests.sandbox._support import accepting_server


def run_inside(cmd: list[str], env: dict[str, str] | None = None, **options: object) -> ExecResult:
    async def main() -> ExecResult:
        async with BwrapSandbox(**options) as sandbox:  # type: ignore[arg-type]
            return await sandbox.exec(cmd, env=env, timeout=60)

    return anyio.run(main)


def python_inside(code: str, **options: object) -> ExecResult:
    return run_inside(["python3", "-c", code], **options)


def test_the_user_inside_is_not_root() -> None:
    result = run_inside(["id", "-u"])
    assert result.stdout == "65534\n"


def test_no_proc_environ_or_cmdline_inside_holds_the_harness_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = f"assay-secret-{secrets.token_hex(8)}"
    monkeypatch.setenv("ASSAY_TEST_SECRET", secret)
    script = "cat /proc/1/environ /proc/*/environ /proc/*/cmdline; echo; cat /proc/self/environ"
    result = run_inside(["sh", "-c", script])
    assert "NAMED_IN=visible" not in result.stdout  # nothing named: the check reads environs
    named = run_inside(["sh", "-c", script], env={"NAMED_IN": "visible"})
    assert "NAMED_IN=visible" in named.stdout  # the reads do see environments
    for output in (result.stdout, result.stderr, named.stdout, named.stderr):
        assert secret not in output
        assert "ASSAY_TEST_SECRET" not in output


def test_proc_1_environ_is_empty() -> None:
    result = run_inside(["sh", "-c", "wc -c < /proc/1/environ"])
    assert result.stdout.strip() == "0"


@pytest.mark.parametrize("target", ["/usr/evil", "/etc/evil", "/evil", "/proc/evil"])
def test_writing_outside_the_work_folder_fails(target: str) -> None:
    result = run_inside(["sh", "-c", f"echo x > {target}"])
    assert result.returncode == 2  # the shell's redirection failed
    assert not Path(target).exists()


def test_the_harness_files_are_not_visible() -> None:
    here = str(Path(__file__).resolve())
    result = run_inside(["sh", "-c", f"test -e {here} || test -e {os.getcwd()}/pyproject.toml"])
    assert result.returncode == 1
    shadow = run_inside(["cat", "/etc/shadow"])
    assert shadow.returncode == 1 and shadow.stdout == ""


def test_the_work_folder_is_writable_and_persists_between_commands() -> None:
    async def main() -> ExecResult:
        async with BwrapSandbox() as sandbox:
            await sandbox.exec(["sh", "-c", "echo kept > /work/a; echo gone > /tmp/b"])
            return await sandbox.exec(["sh", "-c", "cat /work/a; cat /tmp/b"])

    result = anyio.run(main)
    assert result.stdout == "kept\n"  # /tmp is fresh for every command
    assert result.returncode == 1


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 that accepts every connection."""
    with accepting_server() as (port, _):
        yield port


CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).close()
    print("connected")
except OSError as exc:
    print(type(exc).__name__)
"""


def test_no_network_unless_allowed(host_server: int) -> None:
    blocked = run_inside(["python3", "-c", CONNECT, str(host_server)])
    allowed = run_inside(["python3", "-c", CONNECT, str(host_server)], network=True)
    assert blocked.stdout == "ConnectionRefusedError\n"
    assert allowed.stdout == "connected\n"


FORK_BOMB = """
import os, time
made = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(100000)
        made += 1
except OSError as exc:
    print(made, type(exc).__name__)
"""


def test_a_fork_bomb_stops_at_the_process_limit_and_the_sandbox_goes_on() -> None:
    async def main() -> tuple[ExecResult, ExecResult]:
        async with BwrapSandbox(limits=Limits(processes=30)) as sandbox:
            bomb = await sandbox.exec(["python3", "-c", FORK_BOMB], timeout=60)
            after = await sandbox.exec(["echo", "alive"])
            return bomb, after

    bomb, after = anyio.run(main)
    made, error = bomb.stdout.split()
    assert error == "BlockingIOError"  # EAGAIN: the process limit
    assert 0 < int(made) < 30
    assert after.stdout == "alive\n"


def test_a_file_past_the_size_limit_is_refused() -> None:
    code = "open('big', 'wb').write(b'x' * 200_000)"
    result = python_inside(code, limits=Limits(file_size_bytes=100_000))
    # Python ignores SIGXFSZ, so the write fails with EFBIG
    assert result.returncode == 1 and "[Errno 27] File too large" in result.stderr


def test_memory_past_the_limit_is_refused() -> None:
    code = "x = bytearray(800 * 1024 * 1024)"
    result = python_inside(code, limits=Limits(memory_bytes=300 * 1024 * 1024))
    assert result.returncode == 1 and "MemoryError" in result.stderr
    assert python_inside(code).success  # the default limit lets it through


def test_cpu_past_the_limit_kills_the_command() -> None:
    result = python_inside("while True: pass", limits=Limits(cpu_seconds=1))
    assert result.returncode == 128 + 9  # soft = hard: SIGKILL, reported by bwrap as 128 + 9
    assert not result.timed_out


def test_the_harness_cannot_be_signalled_or_seen() -> None:
    code = f"""
import os
print(os.path.exists("/proc/{os.getpid()}"))
try:
    os.kill({os.getpid()}, 9)
    print("sent")
except OSError as exc:
    print(type(exc).__name__)
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[0])
"""
    result = python_inside(code)
    if os.getpid() > 10:  # a pid this small could exist inside too
        assert result.stdout.split()[:2] == ["False", "ProcessLookupError"]
    assert result.stdout.split()[2] == "1"  # its own PID namespace


def test_a_symlink_in_the_work_folder_is_not_followed_by_read_or_write(tmp_path: Path) -> None:
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "secret").write_text("host secret")

    async def main() -> list[str]:
        errors = []
        async with BwrapSandbox() as sandbox:
            # the links' targets are host paths: followed from the host they would leak
            os.symlink(outside / "secret", Path(sandbox.folder) / "leak")
            os.symlink(outside, Path(sandbox.folder) / "dir")
            for attempt in (
                sandbox.read_file("leak"),
                sandbox.write_file("leak", "overwritten"),
                sandbox.write_file("dir/new", "planted"),
                sandbox.read_file("../../etc/passwd"),
            ):
                try:
                    await attempt
                except (OSError, ValueError) as exc:
                    errors.append(type(exc).__name__)
        return errors

    assert anyio.run(main) == ["OSError", "OSError", "NotADirectoryError", "ValueError"]
    assert (outside / "secret").read_text() == "host secret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_missing_bubblewrap_is_a_one_line_error_naming_the_install() -> None:
    async def main() -> None:
        async with BwrapSandbox(bwrap="/nonexistent/bwrap"):
            raise AssertionError("created without bubblewrap")

    with pytest.raises(ConfigError) as caught:
        anyio.run(main)
    line = str(caught.value)
    assert "\n" not in line
    assert "/nonexistent/bwrap" in line and "apt-get install bubblewrap" in line
    assert caught.value.exit_code == EXIT_CONFIG


def test_a_planted_fifo_is_refused_instead_of_hanging_read_or_write() -> None:
    async def main() -> list[str]:
        errors = []
        async with BwrapSandbox() as sandbox:
            assert (await sandbox.exec(["mkfifo", "pipe"])).success
            for attempt in (sandbox.read_file("pipe"), sandbox.write_file("pipe", "x")):
                try:
                    await attempt
                except OSError as exc:
                    errors.append(str(exc))
        return errors

    read_error, write_error = anyio.run(main)
    assert read_error == "pipe is not a regular file"
    assert write_error.startswith("[Errno 6]")  # ENXIO: a FIFO with no reader, not a hang


HOLD_CHILDREN = """
import os, time
made = 0
for _ in range(20):
    if os.fork() == 0:
        time.sleep(100000)
    made += 1
open("ready", "w").close()
while not os.path.exists("go"):
    time.sleep(0.01)
print(made)
"""


def test_the_process_limit_is_per_sandbox_not_shared_between_them() -> None:
    """All sandboxes run as host uid 65534; 3 x 20 processes live at once under a
    limit of 30 each shows the count is kept per sandbox."""

    async def main() -> list[str]:
        sandboxes = [BwrapSandbox(limits=Limits(processes=30)) for _ in range(3)]
        outputs: list[str] = []

        async def hold(sandbox: BwrapSandbox) -> None:
            result = await sandbox.exec(["python3", "-c", HOLD_CHILDREN], timeout=120)
            outputs.append(result.stdout + result.stderr)

        for sandbox in sandboxes:
            await sandbox.create()
        try:
            async with anyio.create_task_group() as group:
                for sandbox in sandboxes:
                    group.start_soon(hold, sandbox)
                # (an exec that ended early, a fork refused, must not leave this waiting)
                while len(outputs) < 3 and not all(
                    os.path.exists(f"{s.folder}/ready") for s in sandboxes
                ):
                    await anyio.sleep(0.01)
                for sandbox in sandboxes:
                    await sandbox.write_file("go", "")
        finally:
            for sandbox in sandboxes:
                await sandbox.cleanup()
        return outputs

    assert anyio.run(main) == ["20\n"] * 3


ROOT_PROBE = "id -u; grep CapEff /proc/self/status; touch /work/made; touch /usr/evil"


def test_user_root_is_root_in_name_only() -> None:
    """user="root" (Inspect's "run as root in the container") is uid 0 inside the user
    namespace, with no capability, and writes what the default user writes: nothing
    outside /work, and its files belong to the same host user."""

    async def main() -> tuple[ExecResult, ExecResult, int]:
        async with BwrapSandbox() as sandbox:
            root = await sandbox.exec(["sh", "-c", ROOT_PROBE], user="root")
            owner = os.stat(Path(sandbox.folder) / "made").st_uid
            nobody = await sandbox.exec(["id", "-u"], user="nobody")
            return root, nobody, owner

    root, nobody, owner = anyio.run(main)
    assert root.stdout == "0\nCapEff:\t0000000000000000\n"
    assert root.stderr == "touch: cannot touch '/usr/evil': Read-only file system\n"
    assert not Path("/usr/evil").exists()
    assert owner == (65534 if os.geteuid() == 0 else os.geteuid())
    assert nobody.stdout == "65534\n"


def test_another_user_is_refused() -> None:
    async def main() -> None:
        async with BwrapSandbox() as sandbox:
            await sandbox.exec(["id"], user="admin")

    with pytest.raises(ValueError, match="'nobody' \\(uid 65534\\) or 'root'"):
        anyio.run(main)


def test_bwrap_failing_before_the_command_runs_raises_instead_of_faking_a_result() -> None:
    """Before: bwrap's own failure (here the work folder gone from the host) came back as
    the command's ExecResult(returncode=1), which a scorer would take as the code failing."""
    from assay.target import InfrastructureError

    async def main() -> None:
        async with BwrapSandbox() as sandbox:
            os.rmdir(sandbox.folder)
            try:
                await sandbox.exec(["true"])
            finally:
                os.mkdir(sandbox.folder)  # for the cleanup

    with pytest.raises(InfrastructureError) as caught:
        anyio.run(main)
    assert caught.value.reason == "sandbox_failed"
    assert caught.value.detail.startswith("the sandbox could not start: bwrap: ")
    assert "No such file or directory" in caught.value.detail


def test_a_command_faking_a_bwrap_error_is_still_its_own_result() -> None:
    result = run_inside(["sh", "-c", "echo 'bwrap: Creating new namespace failed' >&2; exit 1"])
    assert (result.returncode, result.stderr) == (1, "bwrap: Creating new namespace failed\n")
