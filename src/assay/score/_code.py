"""``python_tests``: run the sample's tests against the code the model wrote.

The observation holds the model's completion and the sample's expected value; for this
scorer the expected value *is* the test code (for HumanEval, the problem's ``test``
followed by ``check(entry_point)``). The program run is the code taken from the
completion (out of a markdown fence if the model used one), optionally after the
sample's input (a function stub the completion continues), then the tests. It passes
when the program runs to its end with status 0; anything else fails, and the score's
explanation keeps how it ended and what it printed, capped.
"""

from __future__ import annotations

import os
import re
from typing import Any

import anyio
import anyio.lowlevel

from assay.score._metric import accuracy
from assay.score._sandbox import SandboxLimits, SandboxResult, run_python
from assay.score._score import CORRECT, INCORRECT, PythonScorer, Score, scorer
from assay.score._stats import stderr
from assay.solver import Target, TaskState

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"", "python", "python3", "py"}
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_FENCE_LINE = re.compile(r"^[ \t]*```[\w+#.-]*[ \t]*$\n?", re.MULTILINE)


def extract_code(completion: str) -> str:
    """The code in *completion*: its first Python (or untagged) fenced block, else all of it.

    Chat models wrap code in markdown fences, often after a sentence or two; a block cut
    off by the token limit (no closing fence) is taken to the end, and a lone fence line
    (small models close fences they never opened) is dropped. Leading blank lines go,
    but the first line keeps its indentation: a completion may continue a function body.
    """
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(completion)]
    python = [body for tag, body in blocks if tag in _PYTHON_TAGS]
    code = python[0] if python else _FENCE_LINE.sub("", completion)
    return _LEADING_BLANK_LINES.sub("", code).rstrip()


def build_program(code: str, tests: str, prefix: str = "") -> str:
    """The program a ``python_tests`` run executes: *prefix*, *code*, then *tests*."""
    parts = [prefix.rstrip("\n"), code, tests] if prefix else [code, tests]
    return "\n".join(parts) + "\n"


class _Slots:
    """At most *n* sandboxes at once, per event loop (one limiter cannot span loops)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._loop: object = None
        self._limiter: anyio.CapacityLimiter | None = None

    def limiter(self) -> anyio.CapacityLimiter:
        token = anyio.lowlevel.current_token()
        loop = getattr(token, "native_token", token)  # newer anyio wraps the loop afresh
        if self._limiter is None or self._loop is not loop:
            self._loop, self._limiter = loop, anyio.CapacityLimiter(self.n)
        return self._limiter


@scorer(metrics=[accuracy(), stderr()])
def python_tests(
    *,
    include_input: bool = False,
    timeout: float = 10.0,
    memory_mb: int = 1024,
    output_kb: int = 16,
    max_concurrency: int | None = None,
) -> PythonScorer:
    """Correct when the completion's code passes the tests in the sample's target.

    Args:
        include_input: run the sample's input (e.g. a function signature and docstring
            the model completes) before the completion's code.
        timeout: wall-clock seconds per program; a program still running is killed
            and scored incorrect (a slow answer is a wrong answer, not an error).
        memory_mb: address-space limit of the program.
        output_kb: kilobytes of stdout and of stderr kept in the explanation each.
        max_concurrency: programs running at once (default: the number of CPUs).
    """
    limits = SandboxLimits(
        timeout=timeout, memory_bytes=memory_mb << 20, output_bytes=output_kb << 10
    )
    slots = _Slots(max_concurrency or os.cpu_count() or 1)

    async def score(state: TaskState, target: Target) -> Score:
        if not target.text.strip():
            raise ValueError(
                "python_tests(): the sample's target must hold the test code to run "
                "after the completion; this sample's target is empty"
            )
        code = extract_code(state.output.completion)
        prefix = state.input_text if include_input else ""
        async with slots.limiter():
            result = await run_python(build_program(code, target.text, prefix), limits)
        quiet = result.passed and not result.stdout  # nothing to explain: reports stay short
        return Score(
            value=CORRECT if result.passed else INCORRECT,
            answer=code,
            explanation=None if quiet else explain(result),
            metadata=_metadata(result),
        )

    return score


def explain(result: SandboxResult) -> str:
    """How the program ended, then what it printed on stderr and stdout (capped)."""
    lines = [result.summary()]
    for name, text in (("stderr", result.stderr), ("stdout", result.stdout)):
        if text.strip():
            lines += [f"--- {name} ---", text.rstrip()]
    return "\n".join(lines)


def _metadata(result: SandboxResult) -> dict[str, Any]:
    return {
        "exit_code": result.exit_code,
        "signal": result.signal,
        "timed_out": result.timed_out,
        "finished": result.finished,
        "seconds": result.seconds,
    }
