"""``bash()`` and ``python()``: run what the model writes in the current sample's sandbox.

The model's text is an argument, never spliced into a command line of ours: bash gets it
as the argument of ``-c``, python3 reads it on stdin. The answer is what Inspect's tools
answer (stderr, when there is any, then stdout), capped by the sandbox's output limit
(the cut is marked in the text). A command that fails or runs out of time is still an
answer the model sees, as a ``ToolError`` with the exit code and the output, so it can
try again; only a sandbox that cannot run it at all fails the trial.

The model's text is checked before it is used: a NUL byte, a lone surrogate or an
argument longer than Linux takes would make starting the process raise, which would
fail the trial; a hostile model must not be able to do that, so it is told instead.
"""

from __future__ import annotations

from assay.sandbox import ExecResult
from assay.sandbox import sandbox as sample_sandbox
from assay.solver._tools import Tool, ToolError, define_tool, tool

ARGUMENT_LIMIT = 128 * 1024 - 1  # bytes of one argv string (Linux's MAX_ARG_STRLEN, less its NUL)

PYTHON_DESCRIPTION = (
    "Use the python function to execute Python code. The Python tool executes "
    "single-run Python scripts: each execution is independent, no state (variables, "
    "imports) is kept between runs; use print() to see results, as expressions alone "
    "display nothing; the script cannot read interactive input."
)


@tool
def bash(timeout: float | None = None, user: str | None = None, sandbox: str | None = None) -> Tool:
    """A tool running a bash command in the sample's sandbox (Inspect's ``bash``).

    Args:
        timeout: seconds before the command, and everything it started, is killed
            (None: no limit but the trial's).
        user: the user to run as, passed to the sandbox's ``exec``.
        sandbox: which of the sample's sandboxes to run in (None: its default one).
    """

    async def execute(cmd: str) -> str:
        """Use this function to execute bash commands.

        Args:
            cmd: The bash command to execute.
        """
        command = checked_argument(cmd, "command")
        result = await sample_sandbox(sandbox).exec(
            ["bash", "-c", command], timeout=timeout, user=user
        )
        return answer(result, timeout)

    return define_tool(execute, "bash")


@tool
def python(
    timeout: float | None = None, user: str | None = None, sandbox: str | None = None
) -> Tool:
    """A tool running Python code with ``python3`` in the sample's sandbox (Inspect's
    ``python``); the code goes in on stdin.

    Args:
        timeout: seconds before the script, and everything it started, is killed
            (None: no limit but the trial's).
        user: the user to run as, passed to the sandbox's ``exec``.
        sandbox: which of the sample's sandboxes to run in (None: its default one).
    """

    async def execute(code: str) -> str:
        """Use the python function to execute Python code.

        Args:
            code: The python code to execute.
        """
        script = checked_text(code, "code").encode("utf-8")
        result = await sample_sandbox(sandbox).exec(
            ["python3", "-"], input=script, timeout=timeout, user=user
        )
        return answer(result, timeout)

    return define_tool(execute, "python", PYTHON_DESCRIPTION)


def checked_text(text: str, what: str) -> str:
    """*text*, or a ToolError if it cannot be encoded as UTF-8 (a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"the {what} is not valid Unicode text ({exc.reason})") from None
    return text


def checked_argument(text: str, what: str, hint: str = "write it to a file and run that") -> str:
    """*text*, or a ToolError if it cannot be one argument of a command line."""
    if "\0" in text:
        raise ToolError(f"the {what} contains a NUL byte, which no command-line argument holds")
    size = len(checked_text(text, what).encode("utf-8"))
    if size > ARGUMENT_LIMIT:
        raise ToolError(
            f"the {what} is {size} bytes, more than one command-line argument holds "
            f"({ARGUMENT_LIMIT} bytes); {hint}"
        )
    return text


def answer(result: ExecResult, timeout: float | None) -> str:
    """The tool's answer to the model: the output, or a ``ToolError`` holding it."""
    output = f"{result.stderr}\n{result.stdout}" if result.stderr else result.stdout
    if result.timed_out:
        raise ToolError(
            f"the command timed out after {timeout} s and was killed, with everything it "
            f"started. Its output until then:\n{output}"
        )
    if not result.success:
        raise ToolError(f"the command exited with code {result.returncode}. Its output:\n{output}")
    return output
