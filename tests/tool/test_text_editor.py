"""``text_editor()`` in real sandboxes: every command (view, create, str_replace, insert,
undo_edit), the errors the model is told, the undo history kept per sandbox, and links
planted inside the sandbox never followed on the host."""

from __future__ import annotations

import secrets
from pathlib import Path

import anyio
import pytest

from assay.sandbox import SandboxEnvironment, make_sandbox, sandbox_scope
from assay.sandbox._workfolder import WorkFolderSandbox
from assay.solver._tools import ToolCallError
from assay.tool import text_editor
from tests.tool._support import PROVIDERS, answer, in_sandbox

TEXT = "one\ntwo\n\tthree\ntwo\nfive\n"


def cat_n(descriptor: str, lines: list[str], start: int = 1) -> str:
    numbered = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start))
    return f"Here's the result of running `cat -n` on {descriptor}:\n{numbered}\n"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_create_then_view_whole_or_a_range_with_line_numbers(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        edit = text_editor()
        return [
            await answer(edit, command="create", path="src/f.txt", file_text=TEXT),
            await env.read_file("src/f.txt"),
            await answer(edit, command="view", path="src/f.txt"),
            await answer(edit, command="view", path="src/f.txt", view_range=[2, 3]),
            await answer(edit, command="view", path="src/f.txt", view_range=[4, -1]),
            await answer(edit, command="create", path="src/f.txt", file_text="again"),
            await answer(edit, command="view", path="src/f.txt", view_range=[0, 2]),
            await answer(edit, command="view", path="src/f.txt", view_range=[3, 2]),
            await answer(edit, command="view", path="src/f.txt", view_range=[1, 99]),
            await answer(edit, command="view", path="src/f.txt", view_range=[1]),
            await answer(edit, command="create", path="g.txt"),
        ]

    said = in_sandbox(provider, body)
    assert said[0] == "File created successfully at: src/f.txt"
    assert said[1] == TEXT
    assert said[2] == cat_n("src/f.txt", ["one", "two", "\tthree", "two", "five", ""])
    assert said[3] == cat_n("src/f.txt", ["two", "\tthree"], start=2)
    assert said[4] == cat_n("src/f.txt", ["two", "five", ""], start=4)
    assert said[5] == (
        "Error: File already exists at: src/f.txt. Cannot overwrite files using command `create`."
    )
    assert said[6] == (
        "Error: Invalid `view_range`: [0, 2]. Its first element `0` should be within the "
        "range of lines of the file: [1, 6]"
    )
    assert said[7].startswith("Error: Invalid `view_range`: [3, 2]. Its second element `2`")
    assert said[8].startswith("Error: Invalid `view_range`: [1, 99]. Its second element `99`")
    assert said[9] == "Error: Invalid `view_range`. It should be a list of two integers."
    assert said[10] == "Error: Parameter `file_text` is required for command: create"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_str_replace_needs_exactly_one_match(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> tuple[list[str], str]:
        await env.write_file("f.txt", TEXT)
        edit = text_editor()
        said = [
            await answer(edit, command="str_replace", path="f.txt", old_str="two", new_str="2"),
            await answer(edit, command="str_replace", path="f.txt", old_str="six", new_str="6"),
            await answer(edit, command="str_replace", path="f.txt", old_str="", new_str="6"),
            await answer(edit, command="str_replace", path="nope.txt", old_str="a", new_str="b"),
            await answer(edit, command="str_replace", path="f.txt", new_str="b"),
        ]
        unchanged = await env.read_file("f.txt")
        said.append(
            await answer(
                edit, command="str_replace", path="f.txt", old_str="one\ntwo", new_str="1\n2\n2"
            )
        )
        return said, unchanged + "|" + await env.read_file("f.txt")

    said, files = in_sandbox(provider, body)
    assert said[0] == (
        "Error: No replacement was performed. Multiple occurrences of old_str `two` in lines "
        "[2, 4]. Please ensure it is unique"
    )
    assert said[1] == (
        "Error: No replacement was performed, old_str `six` did not appear verbatim in f.txt."
    )
    assert said[2] == "Error: No replacement was performed: `old_str` is empty."
    assert said[3] == "Error: The path nope.txt does not exist. Please provide a valid path."
    assert said[4] == "Error: Parameter `old_str` is required for command: str_replace"
    assert said[5] == (
        "The file f.txt has been edited. "
        + cat_n("a snippet of f.txt", ["1", "2", "2", "\tthree", "two", "five", ""])
        + "Review the changes and make sure they are as expected. Edit the file again if "
        "necessary."
    )
    before, after = files.split("|")
    assert before == TEXT  # a refused replacement wrote nothing
    assert after == "1\n2\n2\n\tthree\ntwo\nfive\n"  # the tab is kept as it was


@pytest.mark.parametrize("provider", PROVIDERS)
def test_insert_goes_after_the_line_and_undo_puts_back_each_edit_in_turn(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> tuple[list[str], list[str]]:
        await env.write_file("f.txt", "a\nb\n")
        edit = text_editor()
        said, files = [], []
        said.append(await answer(edit, command="insert", path="f.txt", insert_line=1, new_str="x"))
        files.append(await env.read_file("f.txt"))
        await answer(edit, command="insert", path="f.txt", insert_line=0, new_str="top")
        files.append(await env.read_file("f.txt"))
        said.append(await answer(edit, command="insert", path="f.txt", insert_line=9, new_str="z"))
        said.append(await answer(edit, command="insert", path="f.txt", new_str="z"))
        said.append(await answer(edit, command="undo_edit", path="f.txt"))
        files.append(await env.read_file("f.txt"))
        # the same file by another spelling of its path shares its history
        assert isinstance(env, WorkFolderSandbox)
        mount = env.mount
        said.append(await answer(edit, command="undo_edit", path=f"{mount}/./f.txt"))
        files.append(await env.read_file("f.txt"))
        said.append(await answer(edit, command="undo_edit", path="f.txt"))
        return said, files

    said, files = in_sandbox(provider, body)
    assert said[0] == (
        "The file f.txt has been edited. "
        + cat_n("a snippet of the edited file", ["a", "x", "b", ""])
        + "Review the changes and make sure they are as expected (correct indentation, no "
        "duplicate lines, etc). Edit the file again if necessary."
    )
    assert files[:2] == ["a\nx\nb\n", "top\na\nx\nb\n"]
    assert said[1] == (
        "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines "
        "of the file: [0, 5]"
    )
    assert said[2] == "Error: Parameter `insert_line` is required for command: insert"
    assert said[3] == "Last edit to f.txt undone successfully. " + cat_n(
        "f.txt", ["a", "x", "b", ""]
    )
    assert files[2:] == ["a\nx\nb\n", "a\nb\n"]
    assert said[5] == "Error: No edit history found for f.txt."


def test_the_undo_history_is_per_sandbox_though_the_tool_is_shared() -> None:
    edit = text_editor()  # made once, as a task's use_tools(...) makes it for every sample

    async def main() -> tuple[str, str, str, str]:
        async with make_sandbox("bwrap") as first, make_sandbox("bwrap") as second:
            for env, text in [(first, "first"), (second, "second")]:
                await env.write_file("f.txt", text)
            with sandbox_scope({"default": first}):
                await answer(
                    edit, command="str_replace", path="f.txt", old_str="first", new_str="1"
                )
            with sandbox_scope({"default": second}):
                # the other sample's edit of its own f.txt is not this sample's to undo
                refused = await answer(edit, command="undo_edit", path="f.txt")
            with sandbox_scope({"default": first}):
                undone = await answer(edit, command="undo_edit", path="f.txt")
            return refused, undone, await first.read_file("f.txt"), await second.read_file("f.txt")

    refused, undone, first_file, second_file = anyio.run(main)
    assert refused == "Error: No edit history found for f.txt."
    assert undone == "Last edit to f.txt undone successfully. " + cat_n("f.txt", ["first"])
    assert (first_file, second_file) == ("first", "second")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_view_of_a_folder_lists_two_levels_without_hidden_items(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        for path in ["a/b/c/deep.txt", "a/top.txt", ".hidden/x", "a/.secret"]:
            await env.write_file(path, "x")
        edit = text_editor()
        return [
            await answer(edit, command="view", path="a"),
            await answer(edit, command="view", path="a", view_range=[1, 2]),
            await answer(edit, command="str_replace", path="a", old_str="x", new_str="y"),
            await answer(edit, command="view", path="missing"),
        ]

    said = in_sandbox(provider, body)
    assert said[0] == (
        "Here's the files and directories up to 2 levels deep in a, excluding hidden items:\n"
        "a\na/b\na/b/c\na/top.txt\n"
    )
    assert said[1] == (
        "Error: The `view_range` parameter is not allowed when `path` points to a directory."
    )
    assert said[2] == (
        "Error: a is not a regular file in the work folder (a directory, a link or a device): "
        "only `view` works on it."
    )
    assert said[3] == "Error: The path missing does not exist. Please provide a valid path."


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_input_is_told_to_the_model(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        await env.write_file("bin.dat", b"\xff\xfe\x00")
        await env.write_file("big.txt", "y" * 20000)
        edit = text_editor()
        return [
            await answer(edit, command="create", path="/elsewhere/f.txt", file_text="x"),
            await answer(edit, command="str_replace", path="bin.dat", old_str="a", new_str="b"),
            await answer(edit, command="view", path="big.txt"),
        ]

    said = in_sandbox(provider, body)
    assert said[0].startswith(
        "Error: /elsewhere/f.txt is outside the sandbox's work folder; files can only be "
        "created and edited there"
    )
    assert said[1] == "Error: bin.dat is not UTF-8 text; the editor only edits text."
    assert said[2].startswith(cat_n("big.txt", ["y" * 16000])[:-1] + "<response clipped>")
    with pytest.raises(ToolCallError, match="invalid arguments to text_editor"):
        anyio.run(text_editor().execute, {"command": "delete", "path": "f.txt"})


def test_a_link_planted_in_the_sandbox_is_never_followed_on_the_host(tmp_path: Path) -> None:
    target = tmp_path / "host-file.txt"
    secret = f"host secret {secrets.token_hex(8)}"
    target.write_text(secret)

    async def body(env: SandboxEnvironment) -> list[str]:
        edit = text_editor()
        planted = await env.exec(["sh", "-c", f"ln -s {target} link.txt && ln -s {tmp_path} dir"])
        assert planted.success, planted.stderr  # else the test proves nothing
        return [
            await answer(edit, command="view", path="link.txt"),
            await answer(edit, command="str_replace", path="link.txt", old_str="host", new_str="x"),
            await answer(edit, command="create", path="link.txt", file_text="overwritten"),
            await answer(edit, command="create", path="dir/new.txt", file_text="planted"),
            await answer(
                edit, command="insert", path="dir/host-file.txt", insert_line=0, new_str="x"
            ),
        ]

    said = in_sandbox("bwrap", body)
    assert not any(secret in text for text in said), said
    assert all(text.startswith("Error: ") for text in said), said
    assert target.read_text() == secret
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host-file.txt"]


def test_in_bwrap_view_outside_the_work_folder_shows_only_what_the_sandbox_sees() -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        edit = text_editor()
        return [
            await answer(edit, command="view", path="/etc/hosts", view_range=[1, 1]),
            await answer(edit, command="view", path="/etc/shadow"),
            await answer(edit, command="view", path="/root"),
        ]

    hosts, shadow, root = in_sandbox("bwrap", body)
    first_line = Path("/etc/hosts").read_text().split("\n")[0]
    assert hosts == cat_n("/etc/hosts", [first_line])  # a file bound read-only inside
    assert Path("/etc/shadow").exists()  # on the host, where the harness could read it
    assert shadow == (
        "Error: The path /etc/shadow does not exist or cannot be read. Please provide a valid path."
    )
    assert root == (
        "Error: The path /root does not exist or cannot be read. Please provide a valid path."
    )  # the harness's home is not in the sandbox at all


@pytest.mark.parametrize("provider", PROVIDERS)
def test_create_is_not_undone(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> tuple[str, str]:
        edit = text_editor()
        await answer(edit, command="create", path="new.txt", file_text="kept")
        return await answer(edit, command="undo_edit", path="new.txt"), await env.read_file(
            "new.txt"
        )

    assert in_sandbox(provider, body) == ("Error: No edit history found for new.txt.", "kept")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_file_too_big_to_read_into_the_harness_is_refused(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        made = await env.exec(["sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' a > big.txt"])
        assert made.success, made.stderr
        edit = text_editor()
        return [
            await answer(edit, command="view", path="big.txt"),
            await answer(edit, command="str_replace", path="big.txt", old_str="a", new_str="b"),
        ]

    refused = (
        "Error: big.txt is 5000000 bytes, more than the editor reads (4194304 bytes); look at "
        "it in parts with bash (e.g. sed -n '1,100p')."
    )
    assert in_sandbox(provider, body) == [refused, refused]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_path_or_text_no_file_could_take_is_told_to_the_model_not_raised(
    provider: str,
) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        edit = text_editor()
        return [
            await answer(edit, command="view", path="a\0b"),
            await answer(edit, command="view", path="x" * 200_000),
            await answer(edit, command="create", path="f.txt", file_text="\udc80"),
        ]

    said = in_sandbox(provider, body)
    assert said == [
        "Error: the path contains a NUL byte, which no command-line argument holds",
        "Error: the path is 200000 bytes, more than one command-line argument holds (131071 "
        "bytes); no file has a path that long",
        "Error: the file_text is not valid Unicode text (surrogates not allowed)",
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_view_of_a_fifo_or_a_device_is_refused_not_read(provider: str) -> None:
    async def body(env: SandboxEnvironment) -> list[str]:
        made = await env.exec(["mkfifo", "pipe"])
        assert made.success, made.stderr
        edit = text_editor()  # no timeout: a read that blocked would hang the test
        return [
            await answer(edit, command="view", path="pipe"),
            await answer(edit, command="view", path="/dev/zero"),
        ]

    assert in_sandbox(provider, body) == [
        "Error: pipe is a fifo, not a file or a directory: it cannot be viewed.",
        "Error: /dev/zero is a character special file, not a file or a directory: it cannot "
        "be viewed.",
    ]
