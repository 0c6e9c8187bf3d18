"""``python_tests``: run the sample's tests against the code the model wrote.

The observation holds the model's completion and the sample's expected value; for this
scorer the expected value *is* the test code (for HumanEval, the problem's ``test``
followed by ``check(entry_point)``). The candidate's program is the code taken from the
completion (out of a markdown fence if the model used one), optionally after the
sample's input (a function stub the completion continues). It runs in one sandbox, the
tests in another, calling the program's functions across a pipe (see ``_code_run``):
the sample passes when the tests run to their end, and only the tests' process can say
so. Anything else fails, and the score's explanation keeps how it ended and what was
printed, capped.

Every run is recorded in the trial's evidence (a ``score_exec`` event); ``assay score``
replays it instead of running the model's code again.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from assay._digest import canonical_json, sha256_hex
from assay.evidence._recorder import record_own_event
from assay.model import current_replay
from assay.score._code_run import CodeLimits, CodeRun, check_provider, run_tests
from assay.score._metric import accuracy
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


def build_program(code: str, prefix: str = "") -> str:
    """The candidate's program: *prefix* (the sample's input, when asked for), then *code*."""
    parts = [prefix.rstrip("\n"), code] if prefix else [code]
    return "\n".join(parts) + "\n"


class ExecNotRecorded(Exception):
    """Re-scoring met a sandbox run the evidence does not hold (it never runs code)."""


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
    sandbox: str = "bwrap",
) -> PythonScorer:
    """Correct when the tests in the sample's target pass against the completion's code.

    Args:
        include_input: run the sample's input (e.g. a function signature and docstring
            the model completes) before the completion's code.
        timeout: wall-clock seconds for the program and its tests; still running then,
            both are killed and the sample is incorrect (a slow answer is a wrong answer).
        memory_mb: address-space limit of each of the two processes.
        output_kb: kilobytes kept of what the program printed (stdout, stderr) and of
            what the tests printed, each.
        max_concurrency: test runs at once (default: the number of CPUs); in a run with
            ``max_sandboxes`` each run also takes its sample's slot of that cap.
        sandbox: ``bwrap`` (isolating, the default) or ``local`` (isolates nothing: the
            code runs as the harness's user and can reach it; trusted code only).
    """
    check_provider(sandbox)
    limits = CodeLimits(timeout=timeout, memory_bytes=memory_mb << 20, output_bytes=output_kb << 10)
    slots = _Slots(max_concurrency or os.cpu_count() or 1)

    async def score(state: TaskState, target: Target) -> Score:
        if not target.text.strip():
            raise ValueError(
                "python_tests(): the sample's target must hold the test code to run "
                "against the completion; this sample's target is empty"
            )
        code = extract_code(state.output.completion)
        program = build_program(code, state.input_text if include_input else "")
        run = await tested(program, target.text, limits, sandbox, slots)
        quiet = run.passed and not run.stdout  # nothing to explain: reports stay short
        return Score(
            value=CORRECT if run.passed else INCORRECT,
            answer=code,
            explanation=None if quiet else explain(run),
            metadata=_metadata(run),
        )

    return score


async def tested(
    program: str,
    tests: str,
    limits: CodeLimits,
    sandbox: str,
    slots: _Slots | None = None,
    *,
    scorer_name: str = "python_tests",
) -> CodeRun:
    """The run of *tests* against *program*: replayed from the evidence when re-scoring
    (never run again), else run in the sandboxes and recorded as a ``score_exec`` event.

    A live run holds one of *slots* (the scorer's ``max_concurrency``) and, in a run
    with ``max_sandboxes``, a slot of that cap: its two sandboxes are the sample's."""
    request = sha256_hex(
        canonical_json(
            {
                "program": program,
                "tests": tests,
                "limits": msgspec.to_builtins(limits),
                "sandbox": sandbox,
            }
        )
    )
    replay = current_replay()
    if replay is not None:
        recorded = replay.recorded_exec(request)
        if recorded is not None:
            return msgspec.convert(recorded["run"], CodeRun)
        if not replay.live_fallback:
            raise ExecNotRecorded(
                f"{scorer_name}: the run's evidence holds no sandbox run for request "
                f"{request[:12]} of trial {replay.trial}; re-scoring never runs code"
            )
    from assay.sandbox._lifecycle import sandbox_slot

    async with sandbox_slot(), _held(slots):
        run = await run_tests(program, tests, limits, sandbox=sandbox)
    data = {"scorer": scorer_name, "request": request, "run": msgspec.to_builtins(run)}
    record_own_event("exec", data)
    return run


@contextlib.asynccontextmanager
async def _held(slots: _Slots | None) -> AsyncIterator[None]:
    if slots is None:
        yield
        return
    async with slots.limiter():
        yield


def explain(run: CodeRun) -> str:
    """How the tests ended, then what they printed, and the program's stderr and stdout
    (each capped)."""
    lines = [run.summary]
    named = (("tests", run.tests_output), ("stderr", run.stderr), ("stdout", run.stdout))
    for name, text in named:
        if text.strip():
            lines += [f"--- {name} ---", text.rstrip()]
    return "\n".join(lines)


def _metadata(run: CodeRun) -> dict[str, Any]:
    return {
        "exit_code": run.exit_code,
        "signal": run.signal,
        "timed_out": run.timed_out,
        "calls": run.calls,
        "seconds": run.seconds,
    }
