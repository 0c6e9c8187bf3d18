"""``bash()`` and ``python()``: run what the model writes in the current sample's sandbox.

The model's text is an argument, never spliced into a command line of ours: bash gets it
as the argument of ``-c``, python3 reads it on stdin. The answer is what Inspect's tools
answer (stderr, when there is any, then stdout), capped by the sandbox's output limit
(the cut is marked in the text). A command that fails or runs out of time is still an
answer the model sees, as a ``ToolError`` with the exit code and the output, so it can
try again; only a sandbox that cannot run it at all fails the trial.
"""

from __future__ import annotations

from assay.sandbox import ExecResult, sandbox
from assay.solver._tools import Tool, ToolError, define_tool, tool

PYTHON_DESCRIPTION = (
    "Use the python function to execute Python code. The Python tool executes "
    "single-run Python scripts: each execution is independent, no state (variables, "
    "imports) is kept between runs; use print() to see results, as expressions alone "
    "display nothing; the script cannot read interactive input."
)


@tool
def bash(timeout: float | None = None, user: str | None = None) -> Tool:
    """A tool running a bash command in the sample's sandbox (Inspect's ``bash``).

    Args:
        timeout: seconds before the command, and everything it started, is killed
            (None: no limit but the trial's).
        user: the user to run as, passed to the sandbox's ``exec``.
    """

    async def execute(cmd: str) -> str:
        """Use this function to execute bash commands.

        Args:
            cmd: The bash command to execute.
        """
        result = await sandbox().exec(["bash", "-c", cmd], timeout=timeout, user=user)
        return answer(result, timeout)

    return define_tool(execute, "bash")


@tool
def python(timeout: float | None = None, user: str | None = None) -> Tool:
    """A tool running Python code with ``python3`` in the sample's sandbox (Inspect's
    ``python``); the code goes in on stdin.

    Args:
        timeout: seconds before the script, and everything it started, is killed
            (None: no limit but the trial's).
        user: the user to run as, passed to the sandbox's ``exec``.
    """

    async def execute(code: str) -> str:
        """Use the python function to execute Python code.

        Args:
            code: The python code to execute.
        """
        result = await sandbox().exec(["python3", "-"], input=code, timeout=timeout, user=user)
        return answer(result, timeout)

    return define_tool(execute, "python", PYTHON_DESCRIPTION)


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
