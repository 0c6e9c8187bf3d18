"""``bash()`` and ``python()`` in real sandboxes (local and bwrap): what the model is
shown, failures and timeouts told to it rather than raised, output caps, and that the
model's text only ever reaches the sandbox as an argument."""

from __future__ import annotations

import secrets
import shlex
import socket

import anyio
import pytest

from assay.errors import ConfigError
from assay.sandbox import SandboxEnvironment, make_sandbox, sandbox_scope
from assay.tool import bash, python, text_editor
from tests.sandbox._support import no_host_process_with, sleeper
from tests.tool._support import PROVIDERS, answer, in_sandbox


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bash_answers_stderr_then_stdout_from_the_work_folder(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> tuple[str, str, str]:
        await env.write_file("given.txt", "placed by the harness\n")
        tool = bash()
        both = await answer(tool, cmd="echo out; echo err >&2")
        only_out = await answer(tool, cmd="cat given.txt")
        where = await answer(tool, cmd="pwd")
        return both, only_out, where

    both, only_out, where = in_sandbox(provider, body)
    assert both == "err\n\nout\n"  # Inspect's shape: stderr, a newline, stdout
    assert only_out == "placed by the harness\n"
    assert where.strip().startswith("/work" if provider == "bwrap" else "/tmp/assay-sandbox-")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_command_is_bash_s_argument_never_a_string_we_quote(provider: str) -> None:
    # quotes that would break a command line built by pasting the text into one
    cmd = """echo "$0" 'it'"'"'s' "a;b" """

    async def body(env: SandboxEnvironment) -> str:
        return await answer(bash(), cmd=cmd)

    assert in_sandbox(provider, body) == "bash it's a;b\n"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_python_runs_the_code_from_stdin_with_nothing_expanded(provider: str) -> None:
    code = 'print("$(touch pwned)", "`touch pwned2`")\nprint(sum(range(10)))\n'

    async def body(env: SandboxEnvironment) -> tuple[str, str]:
        said = await answer(python(), code=code)
        listing = (await env.exec(["ls", "-A"])).stdout
        return said, listing

    said, listing = in_sandbox(provider, body)
    assert said == "$(touch pwned) `touch pwned2`\n45\n"
    assert listing == ""  # no shell ever saw the code


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_non_zero_exit_goes_back_to_the_model_with_its_code_and_output(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> tuple[str, str]:
        failed = await answer(bash(), cmd="echo partial; echo why >&2; exit 7")
        raised = await answer(python(), code="print('before')\n1 / 0\n")
        return failed, raised

    failed, raised = in_sandbox(provider, body)
    assert failed == "Error: the command exited with code 7. Its output:\nwhy\n\npartial\n"
    assert raised.startswith("Error: the command exited with code 1. Its output:\nTraceback")
    assert raised.endswith("ZeroDivisionError: division by zero\n\nbefore\n")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_goes_back_to_the_model_and_kills_what_the_command_started(
    provider: str,
) -> None:
    marker = f"assay-tool-grandchild-{secrets.token_hex(6)}"
    grandchild = shlex.join(sleeper(marker, "started"))
    cmd = f"{grandchild} & while [ ! -e started ]; do sleep 0.01; done; echo up; sleep 100000"

    async def body(env: SandboxEnvironment) -> tuple[str, str]:
        # 5 s: the grandchild (a Python) must start first, slow on a loaded machine
        said = await answer(bash(timeout=5), cmd=cmd)
        slow = await answer(python(timeout=1), code="import time\ntime.sleep(100000)\n")
        return said, slow

    said, slow = in_sandbox(provider, body)
    assert said.startswith(
        "Error: the command timed out after 5 s and was killed, with everything it started. "
        "Its output until then:\n"
    )
    assert said.endswith("\nup\n")  # what it printed before the kill is shown
    assert slow.startswith("Error: the command timed out after 1 s")
    assert no_host_process_with(marker)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_huge_output_is_capped_at_the_sandbox_s_limit_and_the_answer_says_so(
    provider: str,
) -> None:
    flood = "head -c 5000000 /dev/zero | tr '\\0' x; head -c 3000000 /dev/zero | tr '\\0' e >&2"

    async def body(env: SandboxEnvironment) -> str:
        return await answer(bash(), cmd=flood)

    small = in_sandbox(provider, body, output_limit=1000)
    marker = "\n[assay: output truncated at 1000 bytes]\n"
    assert small == f"{'e' * 1000}{marker}\n{'x' * 1000}{marker}"

    default = in_sandbox(provider, body)  # the sandbox's own cap: 1 MiB of each stream
    cut = "\n[assay: output truncated at 1048576 bytes]\n"
    assert default == f"{'e' * 1048576}{cut}\n{'x' * 1048576}{cut}"


def test_in_bwrap_the_tool_runs_unprivileged_and_sees_none_of_the_harness_s_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = f"sk-{secrets.token_hex(16)}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    cmd = (
        "id -u; env; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\\0' '\\n'; "
        "touch /usr/pwned 2>&1; kill -STOP 1 2>&1; true"
    )

    async def body(env: SandboxEnvironment) -> str:
        return await answer(bash(), cmd=cmd)

    said = in_sandbox("bwrap", body)
    assert said.splitlines()[0] == "65534"
    assert secret not in said and "OPENAI_API_KEY" not in said
    assert "Read-only file system" in said


def test_without_a_sandbox_the_call_fails_the_trial_not_the_model() -> None:
    with pytest.raises(ConfigError) as info:
        anyio.run(bash().execute, {"cmd": "echo hi"})
    assert info.value.key == "sandbox.none"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_user_the_sandbox_cannot_run_as_fails_the_trial_not_the_model(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> str:
        return await answer(bash(user="mallory"), cmd="id -u")

    with pytest.raises(ValueError, match="not 'mallory'"):
        in_sandbox(provider, body)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_no_process_could_be_started_with_is_told_to_the_model_not_raised(
    provider: str,
) -> None:
    limit = 128 * 1024 - 1  # the longest string Linux takes as one argument

    async def body(env: SandboxEnvironment) -> list[str]:
        longest = "true #" + "x" * (limit - len("true #"))
        return [
            await answer(bash(), cmd="echo a\0b"),
            await answer(bash(), cmd="echo \ud800"),
            await answer(python(), code="print('\ud800')"),
            await answer(bash(), cmd=longest),  # runs: the limit is Linux's, not ours
            await answer(bash(), cmd=longest + "x"),
        ]

    said = in_sandbox(provider, body)
    assert said[0] == "Error: the command contains a NUL byte, which no command-line argument holds"
    assert said[1] == "Error: the command is not valid Unicode text (surrogates not allowed)"
    assert said[2] == "Error: the code is not valid Unicode text (surrogates not allowed)"
    assert said[3] == ""
    assert said[4] == (
        f"Error: the command is {limit + 1} bytes, more than one command-line argument holds "
        f"({limit} bytes); write it to a file and run that"
    )


def test_sandbox_names_which_of_the_sample_s_sandboxes_the_tools_use() -> None:
    async def main() -> list[str]:
        async with make_sandbox("bwrap") as default, make_sandbox("local") as other:
            await default.write_file("where.txt", "default\n")
            await other.write_file("where.txt", "other\n")
            with sandbox_scope({"default": default, "other": other}):
                return [
                    await answer(bash(), cmd="cat where.txt"),
                    await answer(bash(sandbox="other"), cmd="cat where.txt"),
                    await answer(python(sandbox="other"), code="print(open('where.txt').read())"),
                    await answer(text_editor(sandbox="other"), command="view", path="where.txt"),
                ]

    said = anyio.run(main)
    assert said[:3] == ["default\n", "other\n", "other\n\n"]
    assert said[3].endswith("     1\tother\n     2\t\n")
    with pytest.raises(ConfigError) as info:
        in_sandbox("local", lambda env: answer(bash(sandbox="nope"), cmd="true"))
    assert info.value.key == "sandbox.no_such_name"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_only_local_lets_the_tool_reach_a_server_on_the_host(provider: str) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        cmd = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"

        async def body(env: SandboxEnvironment) -> str:
            return await answer(bash(timeout=10), cmd=cmd)

        said = in_sandbox(provider, body)
        try:
            connection, _ = server.accept()  # the command has ended: a connection is queued
            connection.close()
            reached = True
        except BlockingIOError:
            reached = False
    if provider == "local":  # no isolation: the same command gets through
        assert (said, reached) == ("connected\n", True)
    else:
        assert said.startswith("Error: the command exited with code 1.")
        assert not reached
