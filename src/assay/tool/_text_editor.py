"""``text_editor()``: view, create and edit files in the sample's sandbox (Inspect's
``text_editor``, i.e. Anthropic's ``str_replace_based_edit_tool``).

Every file access goes through the sandbox: files in its work folder are read and written
with ``read_file``/``write_file`` (which never follow a link the sandbox planted); a
folder listing, and a file outside the work folder (shown, never written), come from
``exec`` inside it. So the tool works the same in ``bwrap`` as in ``local``.

The undo history lives in the tool, keyed by the sandbox object: a tool made once for a
task serves every sample, and each sample's sandbox has its own history, dropped with it.
Files are matched and written as they are (tabs are not expanded, unlike Anthropic's
reference, so a Makefile survives an edit).
"""

from __future__ import annotations

import posixpath
import weakref
from typing import Literal, TypeVar

from assay.sandbox import ExecResult, SandboxEnvironment
from assay.sandbox import sandbox as sample_sandbox
from assay.solver._tools import Tool, ToolError, define_tool, tool
from assay.tool._exec import checked_argument, checked_text

Command = Literal["view", "create", "str_replace", "insert", "undo_edit"]
SNIPPET_LINES = 4  # lines of context shown around an edit
MAX_RESPONSE_LEN = 16000  # characters of a file shown by one view
# bytes of a file the editor reads into the harness: a sandbox can write far bigger files
# (up to its file size limit), and each would otherwise be read whole, here
EDIT_LIMIT = 4 * 1024 * 1024
TRUNCATED_NOTE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown "
    "to you. You should retry this tool after you have searched inside the file with "
    "`grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
)
History = dict[str, list[str]]
T = TypeVar("T")


@tool
def text_editor(
    timeout: float | None = None, user: str | None = None, sandbox: str | None = None
) -> Tool:
    """A tool viewing, creating and editing files in the sample's sandbox.

    Args:
        timeout: seconds each command run in the sandbox (a listing, a read outside the
            work folder) may take.
        user: the user those commands run as, passed to the sandbox's ``exec``.
        sandbox: which of the sample's sandboxes to work in (None: its default one).
    """
    histories: weakref.WeakKeyDictionary[SandboxEnvironment, History] = weakref.WeakKeyDictionary()

    async def execute(
        command: Command,
        path: str,
        file_text: str | None = None,
        insert_line: int | None = None,
        new_str: str | None = None,
        old_str: str | None = None,
        view_range: list[int] | None = None,
    ) -> str:
        """Use this function to execute text editing commands.

        Args:
            command: The command to execute.
            path: Path to file or directory, e.g. `/work/file.py` (relative paths are
                relative to the sandbox's work folder).
            file_text: Required parameter of `create` command, with the content of the
                file to be created.
            insert_line: Required parameter of `insert` command. The `new_str` will be
                inserted AFTER the line `insert_line` of `path`.
            new_str: Optional parameter of `str_replace` command containing the new
                string (if not given, no string will be added). Required parameter of
                `insert` command containing the string to insert.
            old_str: Required parameter of `str_replace` command containing the string in
                `path` to replace.
            view_range: Optional parameter of `view` command when `path` points to a file.
                If none is given, the full file is shown. If provided, the file will be
                shown in the indicated line number range, e.g. [11, 12] will show lines 11
                and 12. Indexing at 1 to start. Setting `[start_line, -1]` shows all lines
                from `start_line` to the end of the file.
        """
        path = checked_argument(path, "path", "no file has a path that long")
        for text, name in [(file_text, "file_text"), (new_str, "new_str"), (old_str, "old_str")]:
            if text is not None:
                checked_text(text, name)
        env = sample_sandbox(sandbox)
        editor = _Editor(env, histories.setdefault(env, {}), timeout, user)
        if command == "view":
            return await editor.view(path, view_range)
        if command == "create":
            return await editor.create(path, _required(file_text, "file_text", command))
        if command == "str_replace":
            return await editor.str_replace(path, _required(old_str, "old_str", command), new_str)
        if command == "insert":
            line = _required(insert_line, "insert_line", command)
            return await editor.insert(path, line, _required(new_str, "new_str", command))
        return await editor.undo_edit(path)

    return define_tool(execute, "text_editor")


def _required(value: T | None, name: str, command: str) -> T:
    if value is None:
        raise ToolError(f"Parameter `{name}` is required for command: {command}")
    return value


class _Editor:
    """The commands, on one sandbox and its history."""

    def __init__(
        self, env: SandboxEnvironment, history: History, timeout: float | None, user: str | None
    ) -> None:
        self.env = env
        self.history = history
        self.timeout = timeout
        self.user = user

    async def view(self, path: str, view_range: list[int] | None) -> str:
        """The file with line numbers (*view_range* of it), or the folder's listing."""
        content = await self._read_any(path)
        if content is None:
            if view_range:
                raise ToolError(
                    "The `view_range` parameter is not allowed when `path` points to a directory."
                )
            return await self._listing(path)
        start = 1
        if view_range:
            start, content = _lines_in_range(content, view_range)
        return _numbered(_truncated(content), path, start)

    async def create(self, path: str, file_text: str) -> str:
        """Write a new file; an existing path is refused, as in Anthropic's tool."""
        try:
            await self.env.read_file(path, text=False)
        except FileNotFoundError:
            pass
        except (ValueError, OSError) as exc:
            raise ToolError(_unusable(path, exc)) from None
        else:
            raise ToolError(
                f"File already exists at: {path}. Cannot overwrite files using command `create`."
            )
        await self._write(path, file_text)
        return f"File created successfully at: {path}"

    async def str_replace(self, path: str, old_str: str, new_str: str | None) -> str:
        """Replace the one occurrence of *old_str*; none or several is refused."""
        content = await self._read_for_edit(path)
        if not old_str:
            raise ToolError("No replacement was performed: `old_str` is empty.")
        starts = _occurrences(content, old_str)
        if not starts:
            raise ToolError(
                f"No replacement was performed, old_str `{old_str}` did not appear verbatim "
                f"in {path}."
            )
        if len(starts) > 1:
            lines = [content.count("\n", 0, start) + 1 for start in starts]
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                f"in lines {lines}. Please ensure it is unique"
            )
        replacement = new_str or ""
        edited = content.replace(old_str, replacement, 1)
        await self._save_edit(path, content, edited)
        at = content.count("\n", 0, starts[0])
        first = max(0, at - SNIPPET_LINES)
        last = at + SNIPPET_LINES + replacement.count("\n")
        snippet = "\n".join(edited.split("\n")[first : last + 1])
        return (
            f"The file {path} has been edited. "
            + _numbered(snippet, f"a snippet of {path}", first + 1)
            + "Review the changes and make sure they are as expected. Edit the file again "
            "if necessary."
        )

    async def insert(self, path: str, insert_line: int, new_str: str) -> str:
        """Insert *new_str* after line *insert_line* (0: at the top)."""
        content = await self._read_for_edit(path)
        lines = content.split("\n")
        if not 0 <= insert_line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the "
                f"range of lines of the file: {[0, len(lines)]}"
            )
        added = new_str.split("\n")
        edited = "\n".join(lines[:insert_line] + added + lines[insert_line:])
        await self._save_edit(path, content, edited)
        before = lines[max(0, insert_line - SNIPPET_LINES) : insert_line]
        after = lines[insert_line : insert_line + SNIPPET_LINES]
        snippet = "\n".join(before + added + after)
        first = max(1, insert_line - SNIPPET_LINES + 1)
        return (
            f"The file {path} has been edited. "
            + _numbered(snippet, "a snippet of the edited file", first)
            + "Review the changes and make sure they are as expected (correct indentation, "
            "no duplicate lines, etc). Edit the file again if necessary."
        )

    async def undo_edit(self, path: str) -> str:
        """Put back the file as it was before its last str_replace or insert."""
        edits = self.history.get(self._key(path))
        if not edits:
            raise ToolError(f"No edit history found for {path}.")
        previous = edits.pop()
        await self._write(path, previous)
        return f"Last edit to {path} undone successfully. " + _numbered(_truncated(previous), path)

    # --- file access, all through the sandbox -------------------------------------

    async def _read_any(self, path: str) -> str | None:
        """The text of the file at *path*, or None when it is a folder."""
        try:
            return await self._read_for_edit(path)
        except _NotEditable:
            pass
        kind = await self._kind(path)
        if kind == "directory":
            return None
        if kind is None:
            raise ToolError(
                f"The path {path} does not exist or cannot be read. Please provide a valid path."
            )
        if kind not in ("regular file", "regular empty file"):
            # a FIFO would block the read, /dev/zero never end it
            raise ToolError(f"{path} is a {kind}, not a file or a directory: it cannot be viewed.")
        # a file outside the work folder, or behind a link: read inside the sandbox, never here
        result = await self._exec(["cat", "--", path])
        if not result.success:
            raise ToolError(
                f"The path {path} does not exist or cannot be read. Please provide a valid path."
            )
        return result.stdout

    async def _read_for_edit(self, path: str) -> str:
        """The text of a regular file in the work folder (no link followed)."""
        await self._refuse_if_too_big(path)
        try:
            data = await self.env.read_file(path, text=False)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolError(
                f"The path {path} does not exist. Please provide a valid path."
            ) from None
        except (ValueError, OSError) as exc:
            raise _NotEditable(_unusable(path, exc)) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not UTF-8 text; the editor only edits text.") from None

    async def _write(self, path: str, text: str) -> None:
        try:
            await self.env.write_file(path, text)
        except (ValueError, OSError) as exc:
            raise ToolError(_unusable(path, exc)) from None

    async def _save_edit(self, path: str, before: str, after: str) -> None:
        await self._write(path, after)
        self.history.setdefault(self._key(path), []).append(before)

    async def _refuse_if_too_big(self, path: str) -> None:
        """A ToolError for a file past ``EDIT_LIMIT``, measured inside the sandbox (in bwrap
        nothing runs there between two commands, so it cannot grow before it is read)."""
        size = await self._exec(["stat", "-c", "%s", "--", path])
        if size.success and size.stdout.strip().isdigit() and int(size.stdout) > EDIT_LIMIT:
            raise ToolError(
                f"{path} is {int(size.stdout)} bytes, more than the editor reads "
                f"({EDIT_LIMIT} bytes); look at it in parts with bash (e.g. sed -n '1,100p')."
            )

    async def _kind(self, path: str) -> str | None:
        """What *path* is inside the sandbox, links followed there (``stat``'s ``%F``:
        ``directory``, ``regular file``, ``fifo`` ...), or None if it cannot be seen."""
        result = await self._exec(["stat", "-L", "-c", "%F", "--", path])
        return result.stdout.strip() if result.success else None

    async def _listing(self, path: str) -> str:
        result = await self._exec(["find", path, "-maxdepth", "2", "-not", "-path", "*/.*"])
        if not result.success:
            raise ToolError(f"Could not list {path}: {result.stderr.strip()}")
        entries = "\n".join(sorted(result.stdout.splitlines()))
        return (
            f"Here's the files and directories up to 2 levels deep in {path}, excluding "
            f"hidden items:\n{entries}\n"
        )

    async def _exec(self, cmd: list[str]) -> ExecResult:
        return await self.env.exec(cmd, timeout=self.timeout, user=self.user)

    def _key(self, path: str) -> str:
        """One key per file, however the model spells its path."""
        mount = getattr(self.env, "mount", None)
        if not posixpath.isabs(path) and isinstance(mount, str):
            path = posixpath.join(mount, path)
        return posixpath.normpath(path)


class _NotEditable(ToolError):
    """A path ``read_file`` will not read: a folder, a link, outside the work folder."""


def _unusable(path: str, exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return (
            f"{path} is outside the sandbox's work folder; files can only be created and "
            f"edited there ({exc})."
        )
    return (
        f"{path} is not a regular file in the work folder (a directory, a link or a "
        "device): only `view` works on it."
    )


def _occurrences(content: str, old: str) -> list[int]:
    """Where *old* starts in *content* (non-overlapping)."""
    starts, at = [], content.find(old)
    while at != -1:
        starts.append(at)
        at = content.find(old, at + len(old))
    return starts


def _lines_in_range(content: str, view_range: list[int]) -> tuple[int, str]:
    """The first line number and the text of lines ``[start, end]`` (end -1: to the end)."""
    lines = content.split("\n")
    if len(view_range) != 2:
        raise ToolError("Invalid `view_range`. It should be a list of two integers.")
    start, end = view_range
    if not 1 <= start <= len(lines):
        raise ToolError(
            f"Invalid `view_range`: {view_range}. Its first element `{start}` should be "
            f"within the range of lines of the file: {[1, len(lines)]}"
        )
    if end > len(lines):
        raise ToolError(
            f"Invalid `view_range`: {view_range}. Its second element `{end}` should be "
            f"smaller than the number of lines in the file: `{len(lines)}`"
        )
    if end != -1 and end < start:
        raise ToolError(
            f"Invalid `view_range`: {view_range}. Its second element `{end}` should be "
            f"larger or equal than its first `{start}`"
        )
    chosen = lines[start - 1 :] if end == -1 else lines[start - 1 : end]
    return start, "\n".join(chosen)


def _truncated(content: str) -> str:
    if len(content) <= MAX_RESPONSE_LEN:
        return content
    return content[:MAX_RESPONSE_LEN] + TRUNCATED_NOTE


def _numbered(content: str, descriptor: str, start: int = 1) -> str:
    """*content* as ``cat -n`` shows it, numbered from *start*."""
    numbered = "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(content.split("\n")))
    return f"Here's the result of running `cat -n` on {descriptor}:\n{numbered}\n"
